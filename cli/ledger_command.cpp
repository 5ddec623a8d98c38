// `tokenline ledger decode|prefill|pd`: the token ledger of one GLM-5.3-style step (or a chunked prefill,
// or a PD handoff) as aligned tables, or as JSON with --json. Everything printed comes from engine/model
// (step_cost, prefill_chunks, pd_transfer, weight_bytes_per_gpu, kv_capacity); this file only parses,
// validates and formats.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/preset_names.h"
#include "common/input_error.h"
#include "cost/memory.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"

namespace tokenline::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kMaxBatch = 1 << 20;             // requests per rank; far above any KV pool
constexpr int64_t kDefaultDecodeContext = 131072;  // the seed's batch-32 example: 128K
constexpr int64_t kDefaultChunk = 32768;           // the seed's SGLang chunk size

struct LedgerArgs {
  std::string phase;
  std::string model = "glm-5.3";
  std::string hardware = "h200";
  std::string parallel;
  std::string kv_layout;
  std::string weights_format;  // "": the checkpoint's (quantization_config)
  std::string dp_gather = "once";
  std::string profile;      // op profile name or directory ("": roofline only)
  std::string engine;       // sglang | vllm | trtllm: the profile <hardware>-<engine>
  std::string profile_set;  // timing overrides "name=value,..."
  int gpus = 0;
  int64_t batch = 1;
  std::optional<int64_t> context;  // absent: the phase's default
  std::optional<int64_t> chunk;    // absent: kDefaultChunk, at most the model's context
  int64_t prefix = 0;
  bool ideal = false;
  bool json = false;
  bool mtp = false;
  bool indexer_keys_only = false;
};

// Everything one run needs, validated.
struct Setup {
  CostModel cm;
  int64_t context = 0;
  int64_t chunk = 0;         // prefill chunk tokens
  std::string kv_warning{};  // "" when the step's KV fits the instance's cache (kv_warning)
};

void check_range(const char* option, int64_t value, int64_t lo, int64_t hi, const std::string& what) {
  if (value < lo || value > hi) {
    throw InputError(option, what + " (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")",
                     std::to_string(value));
  }
}

Setup build_setup(const LedgerArgs& a) {
  const ModelConfig model = load_model(a.model, a.weights_format);
  check_mtp_layers(a.mtp ? 1 : 0, model);
  const Hardware hw = load_hardware(a.hardware);
  const std::string pname = a.parallel.empty() ? "tp" + std::to_string(a.gpus > 0 ? a.gpus : 8) : a.parallel;
  const Parallel parallel = parse_parallel(pname, "--parallel");
  if (a.gpus > 0 && a.gpus != parallel.gpus()) {
    throw InputError("--gpus", "the " + std::to_string(parallel.gpus()) + " GPUs of --parallel " + pname,
                     std::to_string(a.gpus));
  }
  if (a.dp_gather != "once" && a.dp_gather != "per-layer") {
    throw InputError("--dp-gather", "once or per-layer", "'" + a.dp_gather + "'");
  }
  CostOptions o;
  o.ideal = a.ideal;
  o.dp_gather = a.dp_gather == "once" ? DpGather::kOncePerStep : DpGather::kPerLayer;
  o.indexer_read_scales = !a.indexer_keys_only;
  o.mtp = a.mtp;
  // Unasked, the seed's 32,768-token chunk, or the whole context of a model that holds fewer (Nemotron-H-56B:
  // 8,192): a default the user never typed is never refused.
  const int64_t chunk = a.chunk.value_or(std::min(kDefaultChunk, model.max_context_tokens));
  o.max_chunk_tokens = chunk;
  o.profile = load_op_profile(a.profile, a.profile_set, a.mtp ? 1 : 0);
  // The KV a profile's engine stores (SGLang on H200: BF16), else the model's own layout (no profile; --ideal
  // takes none).
  const KvLayout layout = run_kv_layout(profile_engine(o.profile.get()), model, a.kv_layout, hw);
  check_range("--chunk", chunk, 1, model.max_context_tokens, "a chunk of tokens within the model's context");
  Setup s{make_cost_model(model, parallel, layout, hw, o), a.context.value_or(0), chunk};
  const int64_t max_ctx = model.max_context_tokens;
  if (a.phase == "decode") {
    if (!a.context) s.context = std::min(kDefaultDecodeContext, max_ctx - 1);
    check_range("--batch", a.batch, 1, kMaxBatch, "requests per attention rank");
    check_range("--context", s.context, 1, max_ctx - 1, "tokens of context before the decoded token");
  } else {
    if (!a.context) s.context = max_ctx - a.prefix;
    check_range("--prefix", a.prefix, 0, max_ctx - 1, "cached prefix tokens");
    check_range("--context", s.context, 1, max_ctx - a.prefix,
                "prompt tokens after the prefix, within the model's context");
  }
  return s;
}

// Adds every numeric field of `s` into `sum` (prefill: the whole prompt over its chunks).
void add_into(StepCost& sum, const StepCost& s) {
  for (int i = 0; i < kOpCount; ++i) {
    Term& a = sum.terms[i];
    const Term& b = s.terms[i];
    a.layers = std::max(a.layers, b.layers);
    a.count += b.count;
    a.flops += b.flops;
    a.hbm_bytes += b.hbm_bytes;
    a.rank_flops += b.rank_flops;
    a.rank_hbm_bytes += b.rank_hbm_bytes;
    a.weight_bytes += b.weight_bytes;
    a.kv_bytes += b.kv_bytes;
    a.indexer_bytes += b.indexer_bytes;
    a.bytes_each = std::max(a.bytes_each, b.bytes_each);
    a.bytes_total += b.bytes_total;
    a.compute_s += b.compute_s;
    a.memory_s += b.memory_s;
    a.launch_s += b.launch_s;
    a.time_s += b.time_s;
    a.roofline_s += b.roofline_s;
    if (priced(b.source)) a.source = b.source;
  }
  sum.bytes.weight_read += s.bytes.weight_read;
  sum.bytes.kv_read += s.bytes.kv_read;
  sum.bytes.kv_write += s.bytes.kv_write;
  sum.bytes.indexer_read += s.bytes.indexer_read;
  sum.bytes.indexer_write += s.bytes.indexer_write;
  sum.total_s += s.total_s;
  sum.compute_s += s.compute_s;
  sum.weights_s += s.weights_s;
  sum.kv_s += s.kv_s;
  sum.indexer_s += s.indexer_s;
  sum.activations_s += s.activations_s;
  sum.comm_s += s.comm_s;
  sum.launch_s += s.launch_s;
  sum.profile_s += s.profile_s;
  sum.derived_s += s.derived_s;
  sum.bounded_s += s.bounded_s;
  sum.gpu_floor_s += s.gpu_floor_s;
  sum.floor_s += s.floor_s;
  sum.overhead_s += s.overhead_s;
  sum.tokens += s.tokens;
}

// Memory under the engine the pricing names: a profile's engine block (SGLang: latent KV on every TP rank,
// its static fraction of the device as the engine reads it), else the seed's.
KvCapacity capacity(const CostModel& cm, int64_t context) {
  const EngineBehavior* engine = profile_engine(cm.options.profile.get());
  return engine != nullptr ? kv_capacity(cm, *engine, context) : kv_capacity(cm, context);
}

// Whose memory rules `capacity` applied: "sglang 0.5.9", or "seed".
std::string memory_rules(const CostModel& cm) {
  const EngineBehavior* engine = profile_engine(cm.options.profile.get());
  return engine != nullptr ? engine->engine + " " + engine->version : "seed";
}

// Contexts of the batch-limit table: 4K, 32K, 128K, 1M within the model's context, and `context`.
std::vector<int64_t> batch_limit_contexts(const CostModel& cm, int64_t context) {
  std::vector<int64_t> out;
  for (int64_t c : {int64_t{4096}, int64_t{32768}, int64_t{131072}, int64_t{1} << 20}) {
    if (c <= cm.model.max_context_tokens) out.push_back(c);
  }
  if (std::find(out.begin(), out.end(), context) == out.end()) out.push_back(context);
  std::sort(out.begin(), out.end());
  return out;
}

// ---- human output ----

// The ledger names the full-attention core by its layers' kind (docs/layers.md): DSA's sparse MLA (GLM-5,
// DeepSeek-V3.2), MLA (DeepSeek-V3, Kimi-K2.5) or GQA / MHA attention, and shows the indexer's columns and
// rows only for a model with one. trace.json, profiles and `tokenline compare` keep the op's one name
// (op_name: sparse_mla).
std::string ledger_op_name(Op op, const ModelConfig& m) {
  if (op != Op::kSparseMla || m.has_indexer()) return std::string(op_name(op));
  if (m.has_block_sparse()) return "block_sparse_attention";  // MiniMax-M3: its dense layers' too
  if (m.attention == AttentionKind::kCompressed) return "compressed_attention";  // DeepSeek-V4's CSA / HCA
  return m.attention == AttentionKind::kMla ? "mla_attention" : "full_attention";
}

void print_header(const LedgerArgs& a, const Setup& s) {
  const CostModel& cm = s.cm;
  const std::string indexer = cm.model.indexer_cache_layers() > 0
                                  ? " + indexer " + std::to_string(cm.indexer_bytes_token_layer) + " B"
                                  : "";
  std::printf("tokenline ledger %s | %s | %d x %s | %s | kv %s: %lld B%s per token-layer\n", a.phase.c_str(),
              cm.model.name.c_str(), cm.parallel.gpus(), cm.hardware.name.c_str(), cm.parallel.name().c_str(),
              std::string(kv_layout_name(cm.kv_layout)).c_str(), (long long)cm.kv_bytes_token_layer,
              indexer.c_str());
  const WeightFormats& wf = cm.model.weights;
  if (wf.per_group && !(wf.quantized == wf.unquantized))
    std::printf("weights: %s (%s)\n", weight_formats_summary(cm.model).c_str(), wf.source.c_str());
  if (const std::string rows = weight_rows_summary(cm); !rows.empty())
    std::printf("weight rows: %s\n", rows.c_str());
  if (!cm.model.left_out.empty()) std::printf("left out: %s\n", cm.model.left_out.c_str());
  std::printf("layers %d = %d dense + %d MoE", cm.model.layers, cm.model.mlp_dense_layers(),
              cm.model.moe_layers());
  if (cm.model.has_indexer())
    std::printf("; indexer %d full + %d shared", cm.model.indexer_full_layers,
                cm.model.indexer_shared_layers());
  std::printf("\n");
  if (const int kda = cm.model.mixer_layers(MixerKind::kKda); kda > 0)
    std::printf("mixers: %d attention + %d kda\n", cm.model.attention_layers(), kda);
  else if (cm.model.linear_layers() > 0)
    std::printf("mixers: %d attention + %d gdn + %d mamba2\n", cm.model.attention_layers(),
                cm.model.mixer_layers(MixerKind::kGatedDeltaNet), cm.model.mixer_layers(MixerKind::kMamba2));
  if (cm.model.attn_res_block > 0)
    std::printf("attention residuals: a snapshot every %d layers, %lld snapshot reads a token\n",
                cm.model.attn_res_block, static_cast<long long>(cm.model.attn_res_reads()));
  if (cm.model.ffn_layers() < cm.model.layers || cm.model.mixer_blocks() < cm.model.layers)  // Nemotron-H
    std::printf("blocks: %d with a mixer only, %d with an FFN only\n",
                cm.model.layers - cm.model.ffn_layers(), cm.model.layers - cm.model.mixer_blocks());
  if (cm.model.attention == AttentionKind::kCompressed) {  // docs/layers.md "DeepSeek-V4"
    const CompressedAttention& c = cm.model.compressed;
    std::printf(
        "attention %d CSA (4:1, top %lld) + %d HCA (128:1) + %d window-only layers, each with a %lld-token "
        "window; compressed KV %.1f B per token, window %lld B per token-layer with the compressors' state\n",
        c.layers_of(4), (long long)c.index_topk, c.layers_of(128), c.layers_of(0),
        (long long)cm.model.window_tokens, cm.compressed_kv_bytes_token,
        (long long)cm.window_kv_bytes_token_layer);
  } else if (cm.block_sparse_layers > 0) {  // docs/layers.md "MiniMax-M3"
    const BlockSparseShape& b = cm.model.block_sparse;
    std::printf(
        "attention %d full + %d block-sparse (top %lld blocks of %lld tokens; indexer %d heads x %lld over a "
        "BF16 index key per token)\n",
        cm.full_attention_layers - cm.block_sparse_layers, cm.block_sparse_layers, (long long)b.topk_blocks,
        (long long)b.block_tokens, b.index_heads, (long long)b.index_dim);
  } else if (cm.window_layers > 0)  // docs/layers.md: the window_attention row's layers
    std::printf("attention %d full + %d %s of %lld tokens%s\n", cm.full_attention_layers, cm.window_layers,
                cm.chunked_window ? "chunked" : "sliding-window", (long long)cm.model.window_tokens,
                cm.model.attention_sinks ? ", with sinks" : "");
  const ModelConfig& m = cm.model;
  if (m.attention == AttentionKind::kGqa && m.full_layer_shape_differs())  // Gemma 4's global layers
    std::printf(
        "full layers %d x %lld queries, %d x %lld KV%s (%lld B per token-layer); window layers %d x %lld "
        "queries, %d x %lld KV (%lld B)\n",
        m.heads, (long long)m.full_layer_head_dim(), m.full_layer_kv_heads(),
        (long long)m.full_layer_head_dim(), m.full_k_eq_v ? " (keys as values)" : "",
        (long long)cm.kv_bytes_token_layer, m.heads, (long long)m.head_dim, m.kv_heads, (long long)m.head_dim,
        (long long)cm.window_kv_bytes_token_layer);
  if (m.attention == AttentionKind::kGqa && m.v_head_dim > 0)  // MiMo-V2-Flash: values narrower than keys
    std::printf("values %lld wide under %lld-wide query-key heads\n", (long long)m.v_head_dim,
                (long long)m.head_dim);
  if (m.moe_latent > 0)  // Nemotron 3 Super, Kimi-K3: docs/layers.md "Latent MoE"
    std::printf("moe: %d experts (top %d) in a %lld-wide latent, %s at hidden %lld\n", m.routed_experts,
                m.experts_per_token, (long long)m.moe_latent,
                m.hf_model_type == "kimi_linear" ? "routed_expert_down / up_proj" : "fc1 / fc2_latent_proj",
                (long long)m.hidden);
  const std::string profile_times =
      a.profile.empty() ? "" : "profile " + a.profile + " where measured, else roofline";
  const char* times = cm.options.ideal     ? "ideal (the seed's 4.8 TB/s, 787 GB/s, 25 GB/s, 5 us)"
                      : !a.profile.empty() ? profile_times.c_str()
                                           : "achieved (hardware efficiency factors)";
  if (a.phase == "decode") {
    std::printf("batch %lld per attention rank (%lld in the instance) | context %lld | times: %s\n",
                (long long)a.batch, (long long)(a.batch * cm.parallel.dp_attention), (long long)s.context,
                times);
  } else if (a.phase == "prefill") {
    std::printf("prompt %lld tokens after a %lld-token prefix | chunk %lld | times: %s\n",
                (long long)s.context, (long long)a.prefix, (long long)s.chunk, times);
  } else {
    std::printf("one request of %lld tokens handed from prefill to decode | times: %s\n",
                (long long)s.context, times);
  }
}

// The "source" column appears with a profile (without one every op is "roofline"); a measured op with a
// roofline part on top of its rows (Term::roofline_s) is marked "*" and footnoted.
std::string source_cell(const Term& t, bool profiled) {
  constexpr size_t kWidth = 8;  // "roofline"
  std::string cell(time_source_name(t.source));
  if (t.roofline_s > 0) cell += "*";
  return profiled ? " " + cell + std::string(kWidth - std::min(kWidth, cell.size()), ' ') : "";
}

void print_ops(const StepCost& c, bool profiled, const ModelConfig& m) {
  const bool indexer = m.indexer_cache_layers() > 0;
  std::printf("\nOperators (busiest attention rank: FLOPs and bytes of the rank, time of one of its GPUs)\n");
  std::printf("%-20s %6s %7s %12s %10s %10s %9s%s %10s%s\n", "op", "layers", "calls", "GFLOP", "HBM GB",
              "weight GB", "KV GB", indexer ? "  index GB" : "", "time ms", profiled ? " source  " : "");
  for (int i = 0; i < kOpCount; ++i) {
    const Term& t = c.terms[i];
    if (is_collective(Op(i)) || t.count == 0) continue;
    char index[16] = "";
    if (indexer) std::snprintf(index, sizeof index, " %9.3f", t.indexer_bytes / 1e9);
    std::printf("%-20s %6d %7lld %12.2f %10.3f %10.3f %9.3f%s %10.4f%s\n", ledger_op_name(Op(i), m).c_str(),
                t.layers, (long long)t.count, t.rank_flops / 1e9, t.rank_hbm_bytes / 1e9,
                t.weight_bytes / 1e9, t.kv_bytes / 1e9, index, t.time_s * 1e3,
                source_cell(t, profiled).c_str());
  }
  for (int i = 0; i < kOpCount; ++i) {
    const Term& t = c.terms[i];
    if (profiled && t.roofline_s > 0)
      std::printf(
          "* %s: %.4f ms of it the roofline's (the padding rows of the fused MoE's worst-case row buffer, "
          "moe_contiguous_align), counted as activations\n",
          ledger_op_name(Op(i), m).c_str(), t.roofline_s * 1e3);
  }
}

void print_collectives(const StepCost& c, const CostModel& cm) {
  std::printf("\nCollectives over %s (one rank's messages)\n", std::string(link_name(cm.link)).c_str());
  const bool profiled = cm.time_source->measured();
  std::printf("%-18s %-15s %5s %6s %12s %12s %10s %10s%s\n", "collective", "kind", "group", "count",
              "MB each", "MB total", "xfer ms", "launch ms", profiled ? "    time ms source  " : "");
  for (int i = 0; i < kOpCount; ++i) {
    const Term& t = c.terms[i];
    if (!is_collective(Op(i)) || t.count == 0) continue;
    std::printf("%-18s %-15s %5d %6lld %12.3f %12.3f %10.4f %10.4f", std::string(op_name(Op(i))).c_str(),
                std::string(collective_kind_name(op_collective(Op(i)))).c_str(),
                collective_group(Op(i), cm.parallel), (long long)t.count, t.bytes_each / 1e6,
                t.bytes_total / 1e6, t.memory_s * 1e3, t.launch_s * 1e3);
    if (profiled) std::printf(" %10.4f%s", t.time_s * 1e3, source_cell(t, true).c_str());
    std::printf("\n");
  }
  std::printf("%-18s %-15s %5s %6lld %12s %12.3f\n", "total", "", "", (long long)c.collective_count(), "",
              c.collective_bytes() / 1e6);
}

void print_ledgers(const StepCost& c, double rank_tokens, double time_scale, const char* unit, bool profiled,
                   bool indexer) {
  std::printf("\nMarginal-cost ledgers (busiest rank, %.0f tokens)\n  %-44s %12s %14s\n", rank_tokens, "",
              "GB per step", "MB per token");
  const std::string comm = "communication (" + std::to_string(c.collective_count()) + " calls)";
  const std::pair<std::string, double> ledgers[] = {
      {comm, c.collective_bytes()},           {"weight read", c.bytes.weight_read},
      {"KV read", c.bytes.kv_read},           {"KV written", c.bytes.kv_write},
      {"indexer read", c.bytes.indexer_read}, {"indexer written", c.bytes.indexer_write}};
  for (const auto& [name, bytes] : ledgers) {
    if (!indexer && name.rfind("indexer", 0) == 0) continue;
    std::printf("  %-44s %12.3f %14.3f\n", name.c_str(), bytes / 1e9,
                rank_tokens > 0 ? bytes / rank_tokens / 1e6 : 0);
  }
  std::printf("  %-44s %12.3f PFLOP (instance)\n", "FLOPs", c.flops() / 1e15);
  std::printf("\nTime on the busiest GPU: %.4f %s\n", c.total_s * time_scale, unit);
  const std::pair<const char*, double> rows[] = {{"weights", c.weights_s},  {"kv", c.kv_s},
                                                 {"indexer", c.indexer_s},  {"activations", c.activations_s},
                                                 {"compute", c.compute_s},  {"comm", c.comm_s},
                                                 {"launch", c.launch_s},    {"profile", c.profile_s},
                                                 {"step floor", c.floor_s}, {"cpu overhead", c.overhead_s}};
  for (const auto& [name, s] : rows) {
    const std::string_view n = name;
    if (!profiled && (n == "profile" || n == "step floor" || n == "cpu overhead")) continue;
    if (!indexer && n == "indexer") continue;
    std::printf("  %-22s %12.4f %s  %5.1f %%\n", name, s * time_scale, unit,
                c.total_s > 0 ? 100 * s / c.total_s : 0);
  }
}

void print_memory(const CostModel& cm, int64_t context) {
  const WeightBytes w = weight_bytes_per_gpu(cm);
  const KvCapacity k = capacity(cm, context);
  const std::string rules =
      profile_engine(cm.options.profile.get()) != nullptr ? " (" + memory_rules(cm) + "'s memory rules)" : "";
  // SGLang keeps activations and CUDA graphs outside its fraction; the seed reserves activations inside it.
  char kept[96];
  if (k.reserved_bytes > 0) {
    std::snprintf(kept, sizeof kept, "kept back outside it %.2f GB", k.reserved_bytes / 1e9);
  } else {
    std::snprintf(kept, sizeof kept, "activation reserve %.2f GB", k.activation_reserve_bytes / 1e9);
  }
  std::printf(
      "\nMemory per GPU%s: weights %.2f GB (routed experts %.2f + replicated %.2f%s), usable HBM %.2f GB, "
      "%s, free for KV %.2f GB\n",
      rules.c_str(), w.total() / 1e9, w.routed_experts / 1e9, w.replicated / 1e9, w.mtp > 0 ? " + MTP" : "",
      k.usable_hbm_bytes / 1e9, kept, k.free_bytes / 1e9);
  std::printf(
      "KV capacity: %lld tokens (%lld pages of %lld) per attention rank; %lld concurrent requests of %lld "
      "tokens in the instance%s\n",
      (long long)k.tokens_per_rank, (long long)k.pages_per_rank, (long long)kDefaultPageTokens,
      (long long)k.max_concurrent_requests, (long long)context, k.weights_fit ? "" : " (weights do not fit)");
  if (k.state.slots_per_rank > 0)  // a linear-attention model (docs/layers.md): slots beside the KV
    std::printf("State slots: %lld of %.2f MB per attention rank (%d linear layers), %.2f GB per GPU\n",
                (long long)k.state.slots_per_rank, double(k.state.bytes_per_slot) / 1e6,
                cm.model.linear_layers(), k.state.bytes / 1e9);
  std::printf("Batch limit (context tokens: requests holding KV in the instance):");
  for (int64_t ctx : batch_limit_contexts(cm, context)) {
    std::printf("  %lld: %lld", (long long)ctx, (long long)capacity(cm, ctx).max_concurrent_requests);
  }
  std::printf("\n");
}

void print_chunks(const std::vector<ChunkCost>& chunks, bool indexer) {
  std::printf("\nChunks\n%5s %8s %9s %10s%s %11s %11s %9s\n", "chunk", "tokens", "prefix", "PFLOP",
              indexer ? "   idx PFLOP  idx read GB" : "", "KV write GB", "coll GB", "time s");
  for (const ChunkCost& c : chunks) {
    char index[32] = "";
    if (indexer)
      std::snprintf(index, sizeof index, " %11.3f %12.2f", c.cost[Op::kIndexerScore].flops / 1e15,
                    c.cost.bytes.indexer_read / 1e9);
    std::printf("%5d %8lld %9lld %10.3f%s %11.3f %11.2f %9.3f\n", c.index, (long long)c.tokens,
                (long long)c.prefix, c.cost.flops() / 1e15, index, c.cost.bytes.kv_write / 1e9,
                c.cost.collective_bytes() / 1e9, c.cost.total_s);
  }
}

// ---- JSON ----

Json ops_json(const StepCost& c, bool profiled, const ModelConfig& m) {
  Json ops = Json::array();
  for (int i = 0; i < kOpCount; ++i) {
    const Term& t = c.terms[i];
    if (is_collective(Op(i)) || t.count == 0) continue;
    ops.push_back({{"name", ledger_op_name(Op(i), m)},
                   {"layers", t.layers},
                   {"calls", t.count},
                   {"flops", t.flops},
                   {"hbm_bytes", t.hbm_bytes},
                   {"rank_flops", t.rank_flops},
                   {"rank_hbm_bytes", t.rank_hbm_bytes},
                   {"weight_bytes", t.weight_bytes},
                   {"kv_bytes", t.kv_bytes},
                   {"indexer_bytes", t.indexer_bytes},
                   {"compute_s", t.compute_s},
                   {"memory_s", t.memory_s},
                   {"time_s", t.time_s}});
    if (profiled) ops.back()["source"] = time_source_name(t.source);
    if (t.roofline_s > 0) ops.back()["roofline_s"] = t.roofline_s;  // of time_s, priced on the roofline
  }
  return ops;
}

Json collectives_json(const StepCost& c, const CostModel& cm) {
  Json out = Json::array();
  for (int i = 0; i < kOpCount; ++i) {
    const Term& t = c.terms[i];
    if (!is_collective(Op(i)) || t.count == 0) continue;
    out.push_back({{"name", op_name(Op(i))},
                   {"kind", collective_kind_name(op_collective(Op(i)))},
                   {"group", collective_group(Op(i), cm.parallel)},
                   {"link", link_name(cm.link)},
                   {"count", t.count},
                   {"bytes_each", t.bytes_each},
                   {"bytes_total", t.bytes_total},
                   {"transfer_s", t.memory_s},
                   {"launch_s", t.launch_s},
                   {"time_s", t.time_s}});
    if (cm.time_source->measured()) out.back()["source"] = time_source_name(t.source);
  }
  return out;
}

Json totals_json(const StepCost& c) {
  return {{"collective_bytes", c.collective_bytes()},     {"collective_count", c.collective_count()},
          {"weight_read_bytes", c.bytes.weight_read},     {"kv_read_bytes", c.bytes.kv_read},
          {"kv_write_bytes", c.bytes.kv_write},           {"indexer_read_bytes", c.bytes.indexer_read},
          {"indexer_write_bytes", c.bytes.indexer_write}, {"flops", c.flops()}};
}

Json time_json(const StepCost& c, bool profiled) {
  Json t = {{"total", c.total_s},     {"weights", c.weights_s},
            {"kv", c.kv_s},           {"indexer", c.indexer_s},
            {"comm", c.comm_s},       {"launch", c.launch_s},
            {"compute", c.compute_s}, {"activations", c.activations_s}};
  if (profiled) {
    t["profile"] = c.profile_s;    // terms priced from the profile
    t["floor"] = c.floor_s;        // what lifts a short step to its per-layer floor
    t["overhead"] = c.overhead_s;  // per-step CPU time not hidden
    t["coverage"] = c.coverage();  // profile / total
    t["derived"] = c.derived_s;    // of profile: from another weight format's rows by the rule
    // Of profile: collectives at a smaller group's rows (a lower bound), only where a group was not measured.
    if (c.bounded_s > 0) t["bounded"] = c.bounded_s;
  }
  return t;
}

Json memory_json(const CostModel& cm, int64_t context, Json& out) {
  const WeightBytes w = weight_bytes_per_gpu(cm);
  const KvCapacity k = capacity(cm, context);
  out["weights_per_gpu"] = {{"routed_experts_bytes", w.routed_experts},
                            {"replicated_bytes", w.replicated},
                            {"mtp_bytes", w.mtp},
                            {"total_bytes", w.total()}};
  return {{"context", context},
          {"usable_hbm_bytes", k.usable_hbm_bytes},
          {"weight_bytes", k.weight_bytes},
          {"activation_reserve_bytes", k.activation_reserve_bytes},
          {"free_bytes", k.free_bytes},
          {"bytes_per_token", k.bytes_per_token},
          {"tokens_per_rank", k.tokens_per_rank},
          {"pages_per_rank", k.pages_per_rank},
          {"page_tokens", kDefaultPageTokens},
          {"max_concurrent_requests", k.max_concurrent_requests},
          {"weights_fit", k.weights_fit},
          {"engine", memory_rules(cm)}};
}

Json batch_limit_json(const CostModel& cm, int64_t context) {
  Json rows = Json::array();
  for (int64_t ctx : batch_limit_contexts(cm, context)) {
    rows.push_back(
        {{"context", ctx}, {"max_concurrent_requests", capacity(cm, ctx).max_concurrent_requests}});
  }
  return rows;
}

Json marginal_json(const StepCost& c, double rank_tokens) {
  auto per = [&](double bytes) { return rank_tokens > 0 ? bytes / rank_tokens : 0.0; };
  return {{"rank_tokens", rank_tokens},
          {"communication_bytes", per(c.collective_bytes())},
          {"weight_read_bytes", per(c.bytes.weight_read)},
          {"kv_read_bytes", per(c.bytes.kv_read)},
          {"indexer_read_bytes", per(c.bytes.indexer_read)}};
}

Json header_json(const LedgerArgs& a, const Setup& s) {
  const CostModel& cm = s.cm;
  Json h = {
      {"model", cm.model.name},
      {"hardware", cm.hardware.name},
      {"gpus", cm.parallel.gpus()},
      {"kv_layout", kv_layout_name(cm.kv_layout)},
      {"parallel", cm.parallel.name()},
      {"phase", a.phase},
      {"ideal", cm.options.ideal},
      {"batch", a.batch},
      {"instance_batch", a.batch * cm.parallel.dp_attention},
      {"context", s.context},
      {"per_token_layer_bytes", {{"kv", cm.kv_bytes_token_layer}, {"indexer", cm.indexer_bytes_token_layer}}},
      {"layers",
       {{"total", cm.model.layers},
        {"dense", cm.model.mlp_dense_layers()},
        {"moe", cm.model.moe_layers()},
        {"indexer_full", cm.model.has_indexer() ? cm.model.indexer_full_layers : 0},
        {"indexer_shared", cm.model.indexer_shared_layers()}}}};
  // Quantized checkpoints only (a preset's header stays as it was): their formats and what was left out.
  const WeightFormats& wf = cm.model.weights;
  if (wf.per_group && !(wf.quantized == wf.unquantized))
    h["weights"] = {{"format", weight_format_name(wf.quantized)},
                    {"unquantized", weight_format_name(wf.unquantized)},
                    {"source", wf.source},
                    {"summary", weight_formats_summary(cm.model)}};
  if (!cm.model.left_out.empty()) h["left_out"] = cm.model.left_out;
  return h;
}

void emit_step(const LedgerArgs& a, const Setup& s, const StepCost& c, Json* extra_chunks) {
  // Tokens of the busiest rank: one per decoding request, or the whole prompt over its chunks.
  const double rank_tokens = a.phase == "decode" ? double(a.batch) : double(s.context);
  const bool profiled = s.cm.time_source->measured();
  if (!a.json) {
    print_ops(c, profiled, s.cm.model);
    print_collectives(c, s.cm);
    print_ledgers(c, rank_tokens, a.phase == "decode" ? 1e3 : 1, a.phase == "decode" ? "ms" : "s", profiled,
                  s.cm.model.indexer_cache_layers() > 0);
    print_memory(s.cm, a.phase == "decode" ? s.context + 1 : s.context + a.prefix);
    return;
  }
  Json out = header_json(a, s);
  if (profiled) out["profile"] = a.profile;
  out["ops"] = ops_json(c, profiled, s.cm.model);
  out["collectives"] = collectives_json(c, s.cm);
  out["totals"] = totals_json(c);
  out["marginal_per_token"] = marginal_json(c, rank_tokens);
  out["time_s"] = time_json(c, profiled);
  const int64_t held = a.phase == "decode" ? s.context + 1 : s.context + a.prefix;
  out["kv_capacity"] = memory_json(s.cm, held, out);
  out["batch_limit"] = batch_limit_json(s.cm, held);
  if (!s.kv_warning.empty()) out["kv_warning"] = s.kv_warning;
  if (extra_chunks != nullptr) {
    out["chunks"] = std::move(*extra_chunks);
    out["totals"]["ttft_s"] = c.total_s;
  }
  std::cout << out.dump(2) << "\n";
}

void run_prefill(const LedgerArgs& a, const Setup& s) {
  const std::vector<ChunkCost> chunks = prefill_chunks(s.cm, s.context, s.chunk, a.prefix);
  StepCost sum;
  for (const ChunkCost& c : chunks) add_into(sum, c.cost);
  if (!a.json) {
    print_chunks(chunks, s.cm.model.indexer_cache_layers() > 0);
    std::printf("\nTTFT (sum of chunk steps): %.3f s\n", sum.total_s);
    emit_step(a, s, sum, nullptr);
    return;
  }
  Json rows = Json::array();
  for (const ChunkCost& c : chunks) {
    rows.push_back({{"index", c.index},
                    {"tokens", c.tokens},
                    {"prefix", c.prefix},
                    {"flops", c.cost.flops()},
                    {"indexer_flops", c.cost[Op::kIndexerScore].flops},
                    {"indexer_read_bytes", c.cost.bytes.indexer_read},
                    {"kv_write_bytes", c.cost.bytes.kv_write},
                    {"collective_bytes", c.cost.collective_bytes()},
                    {"time_s", c.cost.total_s}});
  }
  emit_step(a, s, sum, &rows);
}

void run_pd(const LedgerArgs& a, const Setup& s) {
  const PdTransfer t = pd_transfer(s.cm, s.context);
  if (!a.json) {
    std::printf("\n%-10s %16s %10s\n", "cache", "bytes", "GB");
    std::printf("%-10s %16.0f %10.3f\n", "kv", t.kv_bytes, t.kv_bytes / 1e9);
    if (s.cm.model.indexer_cache_layers() > 0)
      std::printf("%-10s %16.0f %10.3f\n", "indexer", t.indexer_bytes, t.indexer_bytes / 1e9);
    std::printf("%-10s %16.0f %10.3f\n", "total", t.total_bytes(), t.total_bytes() / 1e9);
    std::printf("\n%-10s %12s\n%-10s %12.4f\n%-10s %12.4f\n", "link", "time s", "nvlink",
                t.time_s(Link::kNvlink, s.cm), "ib", t.time_s(Link::kIb, s.cm));
    return;
  }
  Json out = header_json(a, s);
  out["transfer_bytes"] = {{"kv", t.kv_bytes}, {"indexer", t.indexer_bytes}, {"total", t.total_bytes()}};
  out["time_s"] = {{"nvlink", t.time_s(Link::kNvlink, s.cm)}, {"ib", t.time_s(Link::kIb, s.cm)}};
  if (!s.kv_warning.empty()) out["kv_warning"] = s.kv_warning;
  std::cout << out.dump(2) << "\n";
}

// What the priced step holds in KV against what the instance's KV cache holds: "" when it fits, else the
// warning (the step is priced all the same; a scheduler would run fewer requests at a time or refuse them).
std::string kv_warning(const LedgerArgs& a, const Setup& s) {
  const CostModel& cm = s.cm;
  const int64_t held = a.phase == "decode" ? s.context + 1 : s.context + a.prefix;
  const KvCapacity k = capacity(cm, held);
  const std::string where = std::to_string(cm.parallel.gpus()) + " x " + cm.hardware.name + " " +
                            cm.parallel.name() + " (" + memory_rules(cm) + " memory rules)";
  if (!k.weights_fit) return "the weights do not fit " + where + ": no KV at all";
  if (a.phase == "decode") {
    const int64_t requests = a.batch * cm.parallel.dp_attention;
    if (requests <= k.max_concurrent_requests) return "";
    return "the KV cache of " + where + " holds " + std::to_string(k.max_concurrent_requests) +
           " requests of " + std::to_string(held) + " tokens, not the " + std::to_string(requests) +
           " of --batch " + std::to_string(a.batch) +
           (cm.parallel.dp_attention > 1 ? " per attention rank" : "") +
           "; the step is priced as asked, but no engine would run it";
  }
  if (held <= k.tokens_per_rank) return "";
  return "the KV cache of " + where + " holds " + std::to_string(k.tokens_per_rank) +
         " tokens per attention rank, not the " + std::to_string(held) +
         " of this request; the step is priced as asked, but no engine would run it";
}

void run_ledger(const LedgerArgs& given) {
  check_preset_flags(
      {.model = given.model, .hardware = given.hardware, .profile = given.profile, .engine = given.engine});
  LedgerArgs a = given;  // --engine E: the profile <hardware>-E, named in the output as --profile is
  if (!a.engine.empty()) a.profile = profile_for_engine(a.profile, a.engine, load_hardware(a.hardware));
  Setup s = build_setup(a);
  s.kv_warning = kv_warning(a, s);
  if (!s.kv_warning.empty()) std::fprintf(stderr, "tokenline ledger: warning: %s\n", s.kv_warning.c_str());
  if (!a.json) print_header(a, s);
  if (a.phase == "decode") {
    emit_step(a, s, decode_step(s.cm, a.batch, s.context), nullptr);
  } else if (a.phase == "prefill") {
    run_prefill(a, s);
  } else {
    run_pd(a, s);
  }
}

void add_ledger(CLI::App& app) {
  auto args = std::make_shared<LedgerArgs>();
  CLI::App* cmd =
      app.add_subcommand("ledger", "Token ledger of a decode step, a chunked prefill or a PD handoff");
  cmd->add_option("phase", args->phase, "decode | prefill | pd")
      ->required()
      ->check(CLI::IsMember({"decode", "prefill", "pd"}));
  cmd->add_option("--model", args->model, "preset (glm-5.3, deepseek-v3.2, ...) or config.json path")
      ->capture_default_str();
  cmd->add_option("--hardware", args->hardware, "hardware preset or JSON path")->capture_default_str();
  cmd->add_option("--gpus", args->gpus, "GPUs of the instance (must match --parallel)");
  cmd->add_option("--parallel", args->parallel, "tp8, tp2, dp8-ep8, tp8-ep8, ... (default tp<gpus>)");
  cmd->add_option("--batch", args->batch, "decode: requests per attention rank")->capture_default_str();
  cmd->add_option("--context", args->context, "decode: context tokens; prefill: prompt tokens; pd: tokens");
  cmd->add_option("--chunk", args->chunk,
                  "prefill chunk tokens (default 32768, at most the model's context)");
  cmd->add_option("--prefix", args->prefix, "prefill: cached prefix tokens")->capture_default_str();
  cmd->add_option("--kv-layout", args->kv_layout,
                  "fp8_ds_mla | fp8_e4m3 | nvfp4_ds_mla | bf16 (default: the model's)");
  cmd->add_option("--weights-format", args->weights_format,
                  "override the weight format: bf16 | fp8 | fp8-block128 | nvfp4 | mxfp4 | int4-g128 | ... "
                  "(default: the checkpoint's quantization_config)");
  cmd->add_option("--dp-gather", args->dp_gather, "DP attention gather: once (per step) | per-layer")
      ->capture_default_str();
  cmd->add_flag("--indexer-keys-only", args->indexer_keys_only,
                "count 128 B indexer keys without the 4 B scale in reads");
  cmd->add_flag("--mtp", args->mtp, "run the MTP draft layer after each decode step");
  cmd->add_flag("--ideal", args->ideal,
                "the seed's assumptions instead of the hardware's efficiency factors");
  cmd->add_flag("--json", args->json, "JSON instead of tables");
  cmd->add_option("--profile", args->profile,
                  "price ops from a measured op profile (h200-sglang, or a directory) where it covers them");
  cmd->add_option(
      "--engine", args->engine,
      "sglang | vllm | trtllm: price with that engine's profile on --hardware (<hardware>-<engine>)");
  cmd->add_option("--profile-set", args->profile_set,
                  "override profile timing parameters: name=value[,name=value]");
  cmd->callback([args] { run_ledger(*args); });
}

const CommandRegistration kRegistration("ledger", add_ledger);

}  // namespace
}  // namespace tokenline::cli
