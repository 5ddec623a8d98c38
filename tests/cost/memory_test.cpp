#include "cost/memory.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "run/model_files.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {
CostModel cm_for(const char* model, const char* parallel, KvLayout layout = KvLayout::kFp8DsMla) {
  return make_cost_model(model_preset(model), parse_parallel(parallel, "t"), layout, load_hardware("h200"));
}
}  // namespace

TEST_CASE("Weights per GPU: EP splits experts, TP splits everything", "[memory]") {
  const WeightBytes ep = weight_bytes_per_gpu(cm_for("glm-5.3", "dp8-ep8"));
  const WeightBytes tp = weight_bytes_per_gpu(cm_for("glm-5.3", "tp8"));
  CHECK(ep.routed_experts == Approx(tp.routed_experts));
  CHECK(ep.replicated == Approx(8 * tp.replicated));
  CHECK(tp.total() * 8 == Approx(count_params(model_preset("glm-5.3")).total()));  // FP8: 1 B per param
  const WeightBytes llama = weight_bytes_per_gpu(cm_for("llama-3.1-70b", "tp8", KvLayout::kBf16));
  CHECK(llama.total() * 8 == Approx(70.6e9 * 2).epsilon(0.01));
}

TEST_CASE("KV capacity shrinks with context and says when weights do not fit", "[memory]") {
  const CostModel cm = cm_for("glm-5.3", "tp8");
  const KvCapacity k = kv_capacity(cm, 131072);
  CHECK(k.weights_fit);
  CHECK(k.activation_reserve_bytes == 32768.0 * 6144 * 2 * kActivationBuffers);
  CHECK(k.pages_per_rank == k.tokens_per_rank / kDefaultPageTokens);
  CHECK(kv_capacity(cm, 1 << 20).max_concurrent_requests < k.max_concurrent_requests);
  const KvCapacity one = kv_capacity(cm_for("glm-5.3", "tp1"), 4096);
  CHECK_FALSE(one.weights_fit);
  CHECK(one.free_bytes == 0);
  CHECK(one.max_concurrent_requests == 0);
  // DP attention keeps each rank's KV whole: 8 ranks x per-rank requests.
  const KvCapacity dp = kv_capacity(cm_for("glm-5.3", "dp8-ep8"), 32768);
  CHECK(dp.max_concurrent_requests % 8 == 0);
  CHECK(dp.max_concurrent_requests > 0);
}

namespace {
// Qwen3-235B-A22B (shared/calibration models/Qwen--Qwen3-235B-A22B-FP8_config.json): GQA with 4 KV heads,
// 128 routed experts top-8, no shared expert, FP8 weights.
ModelConfig qwen3_235b() {
  ModelConfig c;
  c.name = "qwen3-235b-a22b";
  c.hf_model_type = "qwen3_moe";
  c.attention = AttentionKind::kGqa;
  c.layers = 94;
  c.hidden = 4096;
  c.heads = 64;
  c.kv_heads = 4;
  c.head_dim = 128;
  c.routed_experts = 128;
  c.experts_per_token = 8;
  c.moe_intermediate = 1536;
  c.vocab = 151936;
  c.max_context_tokens = 40960;
  c.weight_dtype = Dtype::kFp8;
  c.default_kv_layout = KvLayout::kBf16;
  return c;
}
CostModel cm_of(const ModelConfig& m, const char* parallel) {
  return make_cost_model(m, parse_parallel(parallel, "t"), m.default_kv_layout, load_hardware("h200"));
}
// SGLang on a device of the H200 datasheet's 1.41e11 B (134,469 MiB), the figure these cases' arithmetic
// uses; on h200.json an engine sees the driver's 143,771 MiB (the start-up case below).
EngineBehavior sglang_on_datasheet() {
  EngineBehavior b = sglang_behavior();
  b.device_memory_bytes = 1.41e11;
  return b;
}
}  // namespace

TEST_CASE("KV replication: DeepSeek-V3 tp8 on H200 holds 8x fewer KV tokens per GPU than sharded",
          "[memory][engine]") {
  // SGLang keeps the whole MLA latent on every TP rank: BF16 (kv_cache_dtype auto) 512 + 64 dims x 2 B
  // x 61 layers = 70,272 B per token per GPU. mem_fraction_static on a 1.41e11 B device (134,469 MiB),
  // tp8: reserved 512 + 8192 x 1.5 + 512 x 2 + 8/8 x 1024 = 14,848 MiB -> 1 - 14,848 / 134,469 = 0.890.
  const CostModel cm = cm_of(model_preset("deepseek-v3"), "tp8");
  const EngineBehavior sglang = sglang_on_datasheet();
  EngineBehavior sharded = sglang;
  sharded.kv_placement = KvPlacement::kShardedOverTp;
  const KvCapacity k = kv_capacity(cm, sglang, 163840);
  const KvCapacity s = kv_capacity(cm, sharded, 163840);
  CHECK(k.bytes_per_token == 70272);
  CHECK(s.bytes_per_token * 8 == k.bytes_per_token);
  CHECK(k.mem_fraction == Approx(0.890));
  CHECK(k.free_bytes == s.free_bytes);
  CHECK(s.tokens_per_rank / 8 == k.tokens_per_rank);
  // (0.890 x 1.41e11 - 83.88e9 weights) / 70,272 B: SGLang logs a few hundred thousand tokens here.
  CHECK(k.tokens_per_rank == 592151);
  CHECK(k.reserved_bytes == Approx(0.110 * 1.41e11));
  CHECK(derived_max_running_requests(k.tokens_per_rank, 163840) == 2048);
}

TEST_CASE("Start-up memory: SGLang sizes from what is free after it, vLLM takes it out of its share",
          "[memory][engine]") {
  constexpr double kMib = 1024.0 * 1024.0;
  const CostModel cm = cm_of(model_preset("deepseek-v3"), "tp8");
  EngineBehavior sglang = sglang_behavior();
  sglang.device_memory_bytes = 143771 * kMib;  // what an H200 reports
  const KvCapacity device_only = kv_capacity(cm, sglang, 163840);
  sglang.startup_memory_bytes = 3186 * kMib;
  const KvCapacity k = kv_capacity(cm, sglang, 163840);
  // mem_fraction_static comes from the device total: 1 - 14,848 / 143,771 = 0.8967 -> 0.897.
  CHECK(k.mem_fraction == Approx(0.897));
  CHECK(k.usable_hbm_bytes == Approx((143771 - 3186) * kMib * 0.897));
  CHECK(k.reserved_bytes == Approx((143771 - 3186) * kMib * 0.103));
  CHECK(device_only.free_bytes - k.free_bytes == Approx(3186 * kMib * 0.897));
  // (0.897 x 140,585 MiB - 83.88e9 weights) / 70,272 B; 592,151 on the datasheet's 1.41e11 B.
  CHECK(k.tokens_per_rank == 688070);
  EngineBehavior vllm = vllm_behavior();
  vllm.device_memory_bytes = 143771 * kMib;
  const KvCapacity v0 = kv_capacity(cm, vllm, 163840);
  vllm.startup_memory_bytes = 3186 * kMib;
  const KvCapacity v = kv_capacity(cm, vllm, 163840);
  CHECK(v.usable_hbm_bytes == Approx(143771 * kMib * 0.9 - 3186 * kMib));
  CHECK(v0.free_bytes - v.free_bytes == Approx(3186 * kMib));
}

TEST_CASE("GQA under TP: each GPU keeps its KV heads, at least one (Qwen3-235B, 4 KV heads)",
          "[memory][engine]") {
  // 2 x 4 heads x 128 dims x 2 B x 94 layers = 192,512 B per token over all heads.
  const EngineBehavior b = sglang_on_datasheet();
  const CostModel tp4 = cm_of(qwen3_235b(), "tp4");
  const CostModel tp8 = cm_of(qwen3_235b(), "tp8");
  CHECK(kv_bytes_per_token_per_gpu(tp4, KvPlacement::kPerTpRank).main == 192512 / 4);
  CHECK(kv_bytes_per_token_per_gpu(tp8, KvPlacement::kPerTpRank).main == 192512 / 4);  // 1 head, twice held
  CHECK(kv_bytes_per_token_per_gpu(tp8, KvPlacement::kShardedOverTp).main == 192512 / 8);
  CHECK(kv_capacity(tp4, b, 40960).tokens_per_rank == 1395021);
  CHECK(kv_capacity(tp8, b, 40960).tokens_per_rank == 1996827);
}

TEST_CASE("Llama-3.1-8B tp1 on H200 under SGLang's mem_fraction_static", "[memory][engine]") {
  // tp1: reserved 512 + 12,288 + 256 x 2 + 1/8 x 1024 = 13,440 MiB -> fraction 0.900; BF16 weights
  // 16.06 GB; KV 2 x 8 x 128 x 2 B x 32 layers = 131,072 B per token.
  const CostModel cm = cm_of(model_preset("llama-3.1-8b"), "tp1");
  const KvCapacity k = kv_capacity(cm, sglang_on_datasheet(), 131072);
  CHECK(k.mem_fraction == Approx(0.900));
  CHECK(k.bytes_per_token == 131072);
  CHECK(k.tokens_per_rank == 845638);
  EngineBehavior lower = sglang_on_datasheet();
  lower.mem_fraction_static = 0.8;  // --mem-fraction-static 0.8 leaves 0.1 x 141 GB less for KV
  CHECK(kv_capacity(cm, lower, 131072).free_bytes == Approx(k.free_bytes - 0.1 * 1.41e11));
}

TEST_CASE("kv_page_bytes: sharded is the seed's divide-by-tp, per-rank replicates MLA", "[memory][engine]") {
  const CostModel cm = cm_for("glm-5.3", "tp8");
  const KvPageBytes sharded = kv_page_bytes(cm, KvPlacement::kShardedOverTp, 64);
  const KvPageBytes per_rank = kv_page_bytes(cm, KvPlacement::kPerTpRank, 64);
  CHECK(sharded.main == 656 * 78 * 64 / 8);
  CHECK(sharded.indexer == 132 * 21 * 64 / 8);
  CHECK(per_rank.main == 8 * sharded.main);
  CHECK(per_rank.indexer == 8 * sharded.indexer);
}

TEST_CASE("The seed's capacity is the seed behaviour with the cost model's chunk", "[memory][engine]") {
  const CostModel cm = cm_for("glm-5.3", "tp8");
  EngineBehavior seed = seed_behavior();
  seed.chunked_prefill_size = cm.options.max_chunk_tokens;
  const KvCapacity a = kv_capacity(cm, 131072);
  const KvCapacity b = kv_capacity(cm, seed, 131072);
  CHECK(a.tokens_per_rank == b.tokens_per_rank);
  CHECK(a.activation_reserve_bytes == b.activation_reserve_bytes);
  CHECK(a.mem_fraction == 0.9);  // the hardware JSON's usable fraction
  CHECK(a.reserved_bytes == 0);
}

TEST_CASE("TensorRT-LLM's KV is its fraction of what is free after start-up, weights and activations",
          "[memory][engine]") {
  // Llama-3.1-70B BF16 tp8 on H200, as TensorRT-LLM's free_gpu_memory_fraction 0.9 sizes it.
  const CostModel cm = cm_for("llama-3.1-70b", "tp8", KvLayout::kBf16);
  EngineBehavior t = trtllm_behavior();
  t.startup_memory_bytes = 3186 * 1024.0 * 1024.0;
  const KvCapacity k = kv_capacity(cm, t, 8192, kDefaultPageTokens);
  const double device = 143771 * 1024.0 * 1024.0;  // h200.json hbm.device_mib
  const double activations = 8192.0 * 8192 * 2 * kActivationBuffers;
  CHECK(k.usable_hbm_bytes == Approx(device - t.startup_memory_bytes));
  CHECK(k.activation_reserve_bytes == Approx(activations));
  CHECK(k.free_bytes == Approx(0.9 * (device - t.startup_memory_bytes - k.weight_bytes - activations)));
  // The same device under vLLM's rule (0.9 of the device, start-up out of it) keeps less for KV.
  EngineBehavior v = vllm_behavior();
  v.startup_memory_bytes = t.startup_memory_bytes;
  CHECK(kv_capacity(cm, v, 8192, kDefaultPageTokens).free_bytes < k.free_bytes);
}

// Issue 43, the H100 vLLM Llama-3.1-70B rows (calibrate/heldout/SOURCE.md, docs/validation.md "H100 vLLM
// Llama-3.1-70B as launched"): vLLM's rule (gpu_worker.py determine_available_memory: KV = utilization x the
// device total - weights - activation peak - non-torch memory) on an H100 at TP2. The same bytes hold half
// the tokens in BF16 KV (kv_cache_dtype auto: the model's dtype, what the runs had: their
// --config=config.yaml was never read) as in FP8 KV (the config's kv-cache-dtype fp8), and the BF16 pool
// still holds one request of the model's 131,072-token context, which vLLM V1 requires to start (its
// max_model_len default: the config's 10,240 did not apply either).
TEST_CASE("vLLM's KV rule on H100 at TP2: BF16 KV holds half FP8's tokens, and a whole context",
          "[memory][engine]") {
  constexpr double kMib = 1024.0 * 1024.0;
  ModelConfig m = model_preset("llama-3.1-70b");
  m.weight_dtype = Dtype::kFp8;
  const Hardware h100 = load_hardware("h100");
  const CostModel bf16 = make_cost_model(m, parse_parallel("tp2", "t"), KvLayout::kBf16, h100);
  const CostModel fp8 = make_cost_model(m, parse_parallel("tp2", "t"), KvLayout::kFp8E4m3, h100);
  EngineBehavior v = vllm_behavior();
  v.startup_memory_bytes = 3186 * kMib;  // h100-vllm's engine block
  const KvCapacity kb = kv_capacity(bf16, v, 131072, 64);
  const KvCapacity kf = kv_capacity(fp8, v, 131072, 64);
  // 81,559 MiB as the driver reports it (topologies/hardware/h100.json), 0.9 of it, start-up out of it.
  CHECK(kb.usable_hbm_bytes == Approx(81559 * kMib * 0.9 - 3186 * kMib));
  CHECK(kb.free_bytes ==
        Approx(kb.usable_hbm_bytes - kb.weight_bytes - 8192.0 * 8192 * 2 * kActivationBuffers));
  CHECK(kb.free_bytes == Approx(kf.free_bytes));
  // 80 layers x K and V x 4 of 8 KV heads x 128 dims: 2 B each in BF16, 1 B in FP8.
  CHECK(kb.bytes_per_token == 163840);
  CHECK(kf.bytes_per_token == 81920);
  CHECK(kb.tokens_per_rank == int64_t(kb.free_bytes / 163840));
  CHECK(kf.tokens_per_rank / 2 == Approx(kb.tokens_per_rank).margin(1));
  CHECK(kb.tokens_per_rank >= 131072);
  CHECK(kb.tokens_per_rank < 2 * 131072);
}

// Weights per GPU of quantized checkpoints, from their config.json (tests/engine/model/data/hf/SOURCE.md),
// against each checkpoint's size derived apart from tokenline's parameter counts: a published checkpoint
// size, or the checkpoint's tensors listed by shape and element size as its format lays them out.
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string hf(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/" + name;
}

// Bytes of a list of tensors: count tensors of rows x cols elements of elem_bytes each.
struct Tensors {
  double bytes = 0;
  void add(double count, double rows, double cols, double elem_bytes) {
    bytes += count * rows * cols * elem_bytes;
  }
  // A ModelOpt NVFP4 Linear of out x in: weight uint8 [out, in/2], weight_scale float8_e4m3fn [out, in/16],
  // weight_scale_2 and input_scale float32 scalars.
  void nvfp4(double count, double out, double in) { bytes += count * (out * in / 2 + out * in / 16 + 8); }
  // A compressed-tensors pack-quantized INT4 Linear, group 32: weight_packed int32 [out, in/8], weight_scale
  // bf16 [out, in/32], weight_shape int32 [2].
  void int4_g32(double count, double out, double in) {
    bytes += count * (out * in / 8 * 4 + out * in / 32 * 2 + 8);
  }
};
}  // namespace

TEST_CASE("gpt-oss weights per GPU match the model card's MXFP4 checkpoint sizes", "[memory][weights]") {
  // OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card" (2025-08-05), table 1: checkpoint size 60.8 GiB and
  // 12.8 GiB (MXFP4 experts, BF16 elsewhere).
  for (const auto& [name, gib] : {std::pair{"gpt-oss-120b", 60.8}, std::pair{"gpt-oss-20b", 12.8}}) {
    const HfModelRead read = read_hf_config(hf(name) + "/config.json");
    CHECK(read.unsupported.empty());  // sliding windows and sinks are simulated (docs/layers.md)
    const ModelConfig& m = read.config;
    CHECK(m.weights.quantized.kind == WeightFormatKind::kMxfp4);
    CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
    CHECK(m.weights.share(WeightGroup::kAttention) == 0);  // modules_to_not_convert: model.layers.*.self_attn
    const WeightBytes tp1 = weight_bytes_per_gpu(cm_of(m, "tp1"));
    CHECK(tp1.total() == Approx(gib * kGiB).epsilon(0.02));
    CHECK(weight_bytes_per_gpu(cm_of(m, "tp8")).total() * 8 == Approx(tp1.total()));
  }
}

TEST_CASE("gpt-oss-120b MXFP4 experts: weights per GPU match the checkpoint's tensors", "[memory][weights]") {
  const ModelConfig m = model_preset("gpt-oss-120b");
  // openai/gpt-oss-120b's safetensors: experts as MXFP4 blocks (uint8 [.., in / 32, 16]: 4 bits a weight) and
  // E8M0 scales (uint8 [.., in / 32]: 8 bits per 32), so 4.25 bits per parameter; everything else BF16,
  // biases and sinks included.
  const double h = 2880, v = 201088, layers = 36, experts = 128, inter = 2880, q = 64 * 64, kv = 8 * 64;
  Tensors t;
  t.add(2, v, h, 2);                                // embed_tokens, unembedding
  t.add(1 + 2 * layers, 1, h, 2);                   // final norm, input / post-attention norms
  t.add(layers, q + 2 * kv, h + 1, 2);              // q/k/v_proj weights and biases
  t.add(layers, h, q + 1, 2);                       // o_proj weight and bias
  t.add(layers, 1, 64, 2);                          // sinks
  t.add(layers, experts, h + 1, 2);                 // router weight and bias
  t.add(layers * experts, 2 * inter, h, 4.25 / 8);  // gate_up_proj blocks + scales
  t.add(layers * experts, h, inter, 4.25 / 8);      // down_proj blocks + scales
  t.add(layers * experts, 1, 2 * inter + h, 2);     // gate_up / down biases
  CHECK(t.bytes / (1024.0 * 1024 * 1024) == Approx(60.8).epsilon(0.005));  // the model card's 60.8 GiB
  const WeightBytes tp1 = weight_bytes_per_gpu(cm_of(m, "tp1"));
  CHECK(tp1.total() == Approx(t.bytes).epsilon(0.02));
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp8")).total() * 8 == Approx(tp1.total()));
  // MoE EP8: each GPU holds 16 of the 128 experts per layer and all the rest.
  const WeightBytes ep8 = weight_bytes_per_gpu(cm_of(m, "tp8-ep8"));
  CHECK(ep8.routed_experts * 8 == Approx(tp1.routed_experts));
}

TEST_CASE("Kimi-K2.5 INT4 experts: weights per GPU match the checkpoint's tensors", "[memory][weights]") {
  const ModelConfig m = load_hf_config(hf("kimi-k2.5") + "/config.json");
  CHECK(m.weights.quantized ==
        WeightFormat{.kind = WeightFormatKind::kInt4, .group = 32, .weight_only = true});
  // The text model's tensors (DeepSeek-V3 layout; the vision tower's are left out, as tokenline does): routed
  // experts pack-quantized INT4, everything else BF16 (ignore: lm_head, self_attn, shared_experts, the dense
  // layer's mlp), e_score_correction_bias float32.
  const double h = 7168, v = 163840, layers = 61, moe = 60, experts = 384, inter = 2048;
  Tensors t;
  t.add(2, v, h, 2);                                     // embed_tokens, lm_head
  t.add(1 + 2 * layers, 1, h, 2);                        // final norm, input / post-attention norms
  t.add(layers, 1536, h, 2);                             // q_a_proj
  t.add(layers, 1, 1536 + 512, 2);                       // q_a_layernorm, kv_a_layernorm
  t.add(layers, 64 * 192, 1536, 2);                      // q_b_proj
  t.add(layers, 512 + 64, h, 2);                         // kv_a_proj_with_mqa
  t.add(layers, 64 * (128 + 128), 512, 2);               // kv_b_proj
  t.add(layers, h, 64 * 128, 2);                         // o_proj
  t.add(3, 18432, h, 2);                                 // layer 0's dense mlp
  t.add(moe, experts, h, 2);                             // mlp.gate
  t.add(moe, experts, 1, 4);                             // e_score_correction_bias
  t.add(3 * moe, inter, h, 2);                           // shared_experts
  t.int4_g32(2 * moe * experts, inter, h);               // experts.*.gate_proj, up_proj
  t.int4_g32(moe * experts, h, inter);                   // experts.*.down_proj
  CHECK(t.bytes / 1e9 == Approx(594.2).epsilon(0.001));  // the sum, for the record
  const WeightBytes w = weight_bytes_per_gpu(cm_of(m, "tp8"));
  CHECK(w.total() * 8 == Approx(t.bytes).epsilon(0.02));
  CHECK(w.total() < 80e9);  // the BF16 misreading: 256.6 GB per GPU at TP8
}

TEST_CASE("DeepSeek-V3.1-NVFP4: hf_quant_config.json's exclusions give the checkpoint's bytes",
          "[memory][weights]") {
  const ModelConfig m = load_hf_config(hf("deepseek-v3.1-nvfp4") + "/config.json");
  CHECK(m.weights.quantized.kind == WeightFormatKind::kNvfp4);
  CHECK(m.weights.source == "hf_quant_config.json");
  // ModelOpt NVFP4 (hf_quant_config.json): every Linear NVFP4 but the excluded q_a, q_b, kv_a and kv_b
  // projections and lm_head (BF16); routers, norms and embeddings BF16. Layer 61 (MTP) is excluded and left
  // out of both sides: weights per GPU count it only when MTP runs.
  const double h = 7168, v = 129280, layers = 61, dense = 3, moe = 58, experts = 256, inter = 2048;
  Tensors t;
  t.add(2, v, h, 2);
  t.add(1 + 2 * layers, 1, h, 2);
  t.add(layers, 1536, h, 2);
  t.add(layers, 1, 1536 + 512, 2);
  t.add(layers, 128 * 192, 1536, 2);
  t.add(layers, 512 + 64, h, 2);
  t.add(layers, 128 * (128 + 128), 512, 2);
  t.nvfp4(layers, h, 128 * 128);  // o_proj
  t.nvfp4(2 * dense, 18432, h);   // dense gate_proj, up_proj
  t.nvfp4(dense, h, 18432);       // dense down_proj
  t.add(moe, experts, h, 2);
  t.add(moe, experts, 1, 4);
  t.nvfp4(2 * moe, inter, h);  // shared_experts
  t.nvfp4(moe, h, inter);
  t.nvfp4(2 * moe * experts, inter, h);
  t.nvfp4(moe * experts, h, inter);
  CHECK(t.bytes / 1e9 == Approx(386.4).epsilon(0.001));
  const WeightBytes w = weight_bytes_per_gpu(cm_of(m, "tp8"));
  CHECK(w.total() * 8 == Approx(t.bytes).epsilon(0.02));
}

TEST_CASE("Qwen3.5-397B-A17B: Gated DeltaNet layers counted, NVFP4 experts give the checkpoint's bytes",
          "[memory][weights]") {
  // Qwen3.5-397B-A17B's model card: 397B parameters in all, 17B activated (the text model; its MTP layer
  // and vision encoder are not counted).
  const HfModelRead bf16 = read_hf_config(hf("qwen3.5-397b-a17b") + "/config.json");
  CHECK(bf16.unsupported.empty());  // its Gated DeltaNet layers are modelled (docs/layers.md)
  const ModelConfig& b = bf16.config;
  CHECK(b.linear_layers() == 45);
  CHECK(b.linear_layer(0));
  CHECK_FALSE(b.linear_layer(3));
  const ParamCounts p = count_params(b);
  CHECK(p.total() == Approx(397e9).epsilon(0.02));
  CHECK(p.active() == Approx(17e9).epsilon(0.05));
  // nvidia/Qwen3.5-397B-A17B-NVFP4 (ModelOpt, quantization_config in config.json): the routed experts NVFP4;
  // linear_attn*, self_attn*, shared_expert*, lm_head, mtp and the vision tower excluded (BF16).
  const ModelConfig m = read_hf_config(hf("qwen3.5-397b-a17b-nvfp4") + "/config.json").config;
  CHECK(m.weights.quantized.kind == WeightFormatKind::kNvfp4);
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
  CHECK(m.weights.share(WeightGroup::kAttention) == 0);
  CHECK(m.weights.share(WeightGroup::kSharedExperts) == 0);
  CHECK(m.weights.share(WeightGroup::kMtp) == 0);
  const double h = 4096, v = 248320, layers = 60, gdn = 45, full = 15, experts = 512, inter = 1024;
  const double key = 16 * 128, value = 64 * 128;
  Tensors t;
  t.add(2, v, h, 2);                        // embed_tokens, lm_head
  t.add(1 + 2 * layers, 1, h, 2);           // norms
  t.add(gdn, 2 * key + value, h, 2);        // linear_attn.in_proj_qkv
  t.add(gdn, value, h, 2);                  // in_proj_z
  t.add(gdn, 2 * 64, h, 2);                 // in_proj_a, in_proj_b
  t.add(gdn, 2 * key + value, 4, 2);        // conv1d
  t.add(gdn, 1, 2 * 64 + 128, 2);           // A_log, dt_bias, norm
  t.add(gdn, h, value, 2);                  // out_proj
  t.add(full, 2 * 32 * 256, h, 2);          // self_attn.q_proj (with its output gate)
  t.add(full, 2 * 2 * 256, h, 2);           // k_proj, v_proj
  t.add(full, h, 32 * 256, 2);              // o_proj
  t.add(full, 1, 2 * 256, 2);               // q_norm, k_norm
  t.add(layers, experts, h, 2);             // mlp.gate
  t.add(3 * layers, inter, h, 2);           // shared_expert
  t.add(layers, 1, h, 2);                   // shared_expert_gate
  t.nvfp4(2 * layers * experts, inter, h);  // experts gate, up
  t.nvfp4(layers * experts, h, inter);      // experts down
  CHECK(t.bytes / 1e9 == Approx(237.0).epsilon(0.001));
  const WeightBytes w = weight_bytes_per_gpu(cm_of(m, "tp8"));
  CHECK(w.total() * 8 == Approx(t.bytes).epsilon(0.02));
}
