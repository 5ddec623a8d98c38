// The token ledger: what one forward step costs, op by op and collective by collective, and how long it
// takes on the busiest GPU. One code path serves the uniform ledgers of `tokenline ledger` (a decode step
// of b requests at context L, a prefill chunk) and the simulator's heterogeneous steps (step_cost over
// per-rank SeqWork lists, called ~1e6 times per run: no allocation, no strings).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/model/kv_layout.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "topologies/hardware.h"

namespace tokenline {

// The seed's operator table (15 rows) plus the collectives of each topology. Order is execution order.
enum class Op : uint8_t {
  kEmbed,            // vocab-parallel embedding lookup
  kEmbedAllreduce,   // TP: AllReduce of the embedded hidden states
  kDpAllgather,      // DP attention: AllGather of hidden states (once per step, or per layer)
  kRmsnorm,          // residual add + RMSNorm (twice per layer)
  kAProj,            // MLA: q_a + kv_a projection (hidden -> q_lora + kv_lora + rope); GQA: fused qkv
  kNormRopeKvWrite,  // q_a / kv_a RMSNorm + RoPE + KV cache write (+ indexer key write on full layers)
  kQBProj,           // q_b projection (+ W_UK absorption into the latent space)
  kIndexerScore,     // indexer q/k projections and scoring of every cached key (full layers only)
  kTopkSelect,       // top-k over the indexer scores (full layers only; shared layers reuse the indices)
  kSparseMla,        // attention over the selected keys (GQA: dense attention over the context)
  kOProj,            // W_UV + o_proj
  kAttnAllreduce,    // pure TP: AllReduce after o_proj
  kReduceScatter,    // DP attention: ReduceScatter after attention
  kDenseMlp,         // dense layers' MLP (gate/up/down)
  kDenseAllreduce,   // DP attention: AllReduce after the dense MLP
  kRouter,           // MoE gate + grouped top-k
  kDispatch,         // EP: all-to-all of each token to its experts (FP8)
  kExpertGemm,       // routed experts' grouped GEMMs (w1, w3, w2)
  kSharedExpert,     // shared expert MLP
  kCombine,          // EP: all-to-all back (BF16)
  kMlpAllreduce,     // pure TP: AllReduce after the MLP / MoE
  kLmHead,           // vocab-parallel LM head GEMM (decode tokens and last prefill chunks only)
  kVocabAllgather,   // AllGather of FP32 logits over the vocab shards
  kSample,           // sampling (decode tokens and last prefill chunks)
  kMtpDraft,         // MTP layer forward when speculative decoding is on
  kCount,
};
inline constexpr int kOpCount = static_cast<int>(Op::kCount);

enum class CollectiveKind { kNone, kAllReduce, kAllGather, kReduceScatter, kAllToAll };

// What priced a term's time: the roofline (rates x work) or a measured op profile (op_profile.h).
enum class TimeSource : uint8_t { kRoofline, kProfile };
std::string_view time_source_name(TimeSource source);  // "roofline" | "profile"

struct OpProfile;      // op_profile.h
struct ProfileCurves;  // op_profile_pricing.h (private)

std::string_view op_name(Op op);  // the seed's names: "rmsnorm", "a_proj", ...
// op_name() views a string literal: .data() is null-terminated with static storage (OpSpan::name uses it).
std::optional<Op> find_op(std::string_view name);  // the op op_name() calls `name`; nullopt for none
// kNone for compute ops. Inline: step_cost asks it of every op of every rank of every step.
constexpr CollectiveKind op_collective(Op op) {
  switch (op) {
    case Op::kEmbedAllreduce:
    case Op::kAttnAllreduce:
    case Op::kDenseAllreduce:
    case Op::kMlpAllreduce:
      return CollectiveKind::kAllReduce;
    case Op::kDpAllgather:
    case Op::kVocabAllgather:
      return CollectiveKind::kAllGather;
    case Op::kReduceScatter:
      return CollectiveKind::kReduceScatter;
    case Op::kDispatch:
    case Op::kCombine:
      return CollectiveKind::kAllToAll;
    case Op::kEmbed:
    case Op::kRmsnorm:
    case Op::kAProj:
    case Op::kNormRopeKvWrite:
    case Op::kQBProj:
    case Op::kIndexerScore:
    case Op::kTopkSelect:
    case Op::kSparseMla:
    case Op::kOProj:
    case Op::kDenseMlp:
    case Op::kRouter:
    case Op::kExpertGemm:
    case Op::kSharedExpert:
    case Op::kLmHead:
    case Op::kSample:
    case Op::kMtpDraft:
    case Op::kCount:
      return CollectiveKind::kNone;
  }
  return CollectiveKind::kNone;
}
std::string_view collective_kind_name(CollectiveKind kind);  // "allreduce", "alltoall", ...
constexpr bool is_collective(Op op) {
  return op_collective(op) != CollectiveKind::kNone;
}
// The collectives among the ops, in execution order.
inline constexpr int kCollectiveCount = [] {
  int n = 0;
  for (int i = 0; i < kOpCount; ++i) n += is_collective(Op(i)) ? 1 : 0;
  return n;
}();
inline constexpr std::array<Op, kCollectiveCount> kCollectiveOps = [] {
  std::array<Op, kCollectiveCount> ops{};
  size_t n = 0;
  for (int i = 0; i < kOpCount; ++i)
    if (is_collective(Op(i))) ops[n++] = Op(i);
  return ops;
}();
// GPUs taking part in one call of a collective: tp for attention/MLP AllReduce under pure TP, ep for
// dispatch/combine, all GPUs of the instance otherwise; 0 for compute ops.
int collective_group(Op op, const Parallel& parallel);

// Where a collective's bytes travel.
enum class Link { kNvlink, kIb };
std::string_view link_name(Link link);

// Where DP attention gathers hidden states. The seed uses both: its decode collective table gathers once
// per step (1 + 1 + 78 + 3 messages, 261 MB at b=256); its batch-32 example gathers before every layer
// (78 AllGather + 78 ReduceScatter = 156 messages, 61 MB).
enum class DpGather { kOncePerStep, kPerLayer };

// One sequence's work in one step on one attention rank.
struct SeqWork {
  int64_t new_tokens = 0;      // tokens computed this step (1 for plain decode, a chunk for prefill)
  int64_t context_tokens = 0;  // tokens already in the KV cache before this step
  bool prefill = false;        // prefill chunk (no sampling unless last_chunk)
  bool last_chunk = false;     // prefill: the chunk that completes the prompt (LM head + sample 1 token)
};

struct CostOptions {
  bool ideal = false;  // seed's assumptions: 4.8 TB/s HBM, 787 GB/s NVLink, 25 GB/s IB,
                       // 5 us per collective, peak FLOPs, no kernel launch cost
  DpGather dp_gather = DpGather::kOncePerStep;
  bool indexer_read_scales = true;     // count the 4 B scale in indexer reads (132 B) or keys only (128 B)
  int64_t indexer_q_tile_tokens = 32;  // prefill: query tokens that share one pass over the indexer keys
  int64_t max_chunk_tokens = 32768;    // largest prefill chunk; sizes the activation reserve
  bool mtp = false;                    // run the MTP draft layer after each decode step
  bool force_ib = false;               // put collectives on IB even inside one NVLink domain
  // Measured op latencies and timing parameters (--profile); null: every op from the roofline. Not with
  // ideal (the seed's figures are rooflines).
  std::shared_ptr<const OpProfile> profile;
  // A run of many steps (`tokenline sim`): the profile's token and message curves remember their value at
  // each whole token count up to this (OpCurve::tabulate), one load per lookup after the first. 0: none (a
  // cost model priced a few times, as plan's pruning makes by the thousand, skips the table's fill).
  int64_t remembered_tokens = 0;
};

// GPUs one NVLink/NVSwitch domain holds when the hardware does not say (HGX H100/H200/B200: 8); larger
// instances put collectives on IB.
inline constexpr int kNvlinkDomainGpus = 8;

// Rates and derived constants prebuilt once per (model, parallel, layout, hardware, options).
struct CostModel {
  ModelConfig model;
  Parallel parallel;
  KvLayout kv_layout = KvLayout::kFp8DsMla;
  Hardware hardware;  // as given; the rates below already apply efficiencies or the ideal figures
  CostOptions options;
  // effective rates, bytes/s and FLOP/s per GPU
  double hbm_bw = 0;
  double gemm_flops = 0;       // weight-dtype GEMMs
  double attention_flops = 0;  // sparse MLA / attention (BF16 math)
  double indexer_flops = 0;    // indexer scoring (FP8 math)
  double vector_flops = 0;     // norms, router softmax, sampling
  double link_bw = 0;          // collectives' bus bandwidth
  Link link = Link::kNvlink;
  double collective_launch_s = 0;
  double kernel_launch_s = 0;
  // per-token-per-layer bytes
  int64_t kv_bytes_token_layer = 0;
  int64_t indexer_bytes_token_layer = 0;       // written (132)
  int64_t indexer_read_bytes_token_layer = 0;  // read: 132, or 128 without scales
  double weight_bytes_per_param = 1;           // the attention projections' (group_bytes_per_param)
  // Per weight group (WeightGroup's order): bytes per parameter with scales, and the GEMM rate (FLOP/s,
  // efficiency applied) of its format on this hardware. Equal across groups for a preset.
  std::array<double, kWeightGroupCount> group_bytes_per_param{};
  std::array<double, kWeightGroupCount> group_gemm_flops{};
  double bpp(WeightGroup g) const { return group_bytes_per_param[static_cast<size_t>(g)]; }
  double gemm_rate(WeightGroup g) const { return group_gemm_flops[static_cast<size_t>(g)]; }
  // MTP draft layer (CostOptions::mtp): parameters touched per token, and all its parameters
  double mtp_active_params = 0;
  double mtp_params = 0;
  // options.profile resolved for this model and layout (null without a profile)
  std::shared_ptr<const ProfileCurves> profile;
};

// Builds the rates; validates the parallel layout and the KV layout against the model (InputError).
CostModel make_cost_model(const ModelConfig& model, const Parallel& parallel, KvLayout kv_layout,
                          const Hardware& hardware, const CostOptions& options = {});

// One op's or collective's share of a step: instance-wide totals, and the busiest attention rank's share
// (one rank = its tp GPUs together; one GPU under dp8, the whole instance under tp8).
struct Term {
  int layers = 0;             // layers it runs on (1 for per-step ops)
  int64_t count = 0;          // kernel launches or collective calls on one GPU
  double flops = 0;           // instance-wide
  double hbm_bytes = 0;       // instance-wide
  double rank_flops = 0;      // busiest rank
  double rank_hbm_bytes = 0;  // busiest rank = weight + kv + indexer + activation bytes below
  double weight_bytes = 0;    // busiest rank
  double kv_bytes = 0;        // busiest rank: main KV read + written
  double indexer_bytes = 0;   // busiest rank: indexer cache read + written
  double bytes_each = 0;      // collectives: one message of one rank (the seed's formula)
  double bytes_total = 0;     // collectives: count x bytes_each
  double compute_s = 0;       // one GPU: rank_flops / tp / FLOP rate
  double memory_s = 0;        // one GPU: rank_hbm_bytes / tp / HBM bandwidth (collectives: transfer)
  double launch_s = 0;        // kernel or collective launches
  double time_s = 0;          // roofline: max(compute_s, memory_s) + launch_s; profile: the measured time
  TimeSource source = TimeSource::kRoofline;
};

// Bytes moved by the busiest attention rank in one step, by class.
struct RankBytes {
  double weight_read = 0;
  double kv_read = 0;
  double kv_write = 0;
  double indexer_read = 0;
  double indexer_write = 0;
};

struct StepCost {
  std::array<Term, kOpCount> terms{};
  RankBytes bytes;       // busiest rank
  double total_s = 0;    // busiest GPU: compute ops + collectives + launches
  double compute_s = 0;  // ops whose roofline is compute-bound
  double weights_s = 0;  // memory-bound time, split by byte class
  double kv_s = 0;
  double indexer_s = 0;
  double activations_s = 0;
  double comm_s = 0;       // collectives' transfer time
  double launch_s = 0;     // collective launches + kernel launches
  double profile_s = 0;    // terms priced from the profile (not split into the classes above)
  double gpu_floor_s = 0;  // profile timing: the GPU part lasts at least this (per layer run x layers run)
  double floor_s = 0;      // what lifts a short step to gpu_floor_s
  double overhead_s = 0;   // profile timing: per-step CPU time not hidden behind the GPU
  int busiest_rank = 0;
  int64_t tokens = 0;  // new tokens over all ranks
  const Term& operator[](Op op) const { return terms[static_cast<size_t>(op)]; }
  Term& operator[](Op op) { return terms[static_cast<size_t>(op)]; }
  double collective_bytes() const;  // sum of bytes_total over collectives
  int64_t collective_count() const;
  double flops() const;                                                      // instance-wide
  double coverage() const { return total_s > 0 ? profile_s / total_s : 0; }  // share of time from profiles
};

// The cost of one step: per_rank[r] lists attention rank r's sequences (per_rank.size() <= dp_attention;
// missing ranks are idle). Times are those of the busiest GPU. No allocation (but
// for an own profile under DP: one time per rank, for each group's peers' load).
StepCost step_cost(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank);
// The same with MoE load imbalance (moe_load.h): the busiest EP GPU holds expert_imbalance (>= 1) times the
// mean token-expert pairs, which scales its expert GEMM work and the dispatch/combine messages.
StepCost step_cost(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                   double expert_imbalance);
// Convenience for one rank (pure TP, or DP with the other ranks idle).
StepCost step_cost(const CostModel& cm, std::span<const SeqWork> rank0);

// Uniform decode step: every attention rank decodes `batch` requests at `context` tokens of context
// (under DP attention `batch` counts one rank's requests, as the seed's b does).
StepCost decode_step(const CostModel& cm, int64_t batch, int64_t context);

// One prefill chunk of `tokens` after `prefix` cached tokens on rank 0.
StepCost prefill_step(const CostModel& cm, int64_t tokens, int64_t prefix, bool last_chunk);

// A prompt of `prompt_tokens` after `prefix` cached tokens, prefilled in chunks of `chunk_tokens` on
// rank 0 (the seed's 1M prefill: 32 chunks of 32768). The last chunk samples the first token.
struct ChunkCost {
  int index = 0;
  int64_t tokens = 0;
  int64_t prefix = 0;
  StepCost cost;
};
std::vector<ChunkCost> prefill_chunks(const CostModel& cm, int64_t prompt_tokens, int64_t chunk_tokens,
                                      int64_t prefix = 0);

// PD disaggregation: bytes of one request's KV + indexer cache handed from prefill to decode.
struct PdTransfer {
  double kv_bytes = 0;
  double indexer_bytes = 0;
  double total_bytes() const { return kv_bytes + indexer_bytes; }
  double time_s(Link link, const CostModel& cm) const;  // bytes / that link's bandwidth (+ latency)
};
PdTransfer pd_transfer(const CostModel& cm, int64_t context);

// What an op span names as its source: time_source_name(term.source) when a profile prices cm, null for
// a roofline-only model (whose traces keep their bytes). Static storage.
const char* span_source(const CostModel& cm, const Term& term);

}  // namespace tokenline
