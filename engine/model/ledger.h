// The token ledger's vocabulary: the ops of one forward step in execution order, their collectives and
// groups, and one sequence's work in a step. What the ops cost and how long they take is cost/
// (cost/step_cost.h); this header is the contract between the worlds (docs/architecture.md "The four
// contracts": the real engine runs kernels with these names, the cost models price these names).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/model/parallel.h"

namespace tokenline {

// The seed's operator table (15 rows) plus the collectives of each topology. Order is execution order.
enum class Op : uint8_t {
  kEmbed,           // vocab-parallel embedding lookup
  kEmbedAllreduce,  // TP: AllReduce of the embedded hidden states
  kDpAllgather,     // DP attention: AllGather of hidden states (once per step, or per layer)
  kRmsnorm,         // residual add + RMSNorm (twice per layer)
  kAttnRes,  // Kimi-K3's attention residuals: each layer's two softmax mixes over the residual snapshots
  kAProj,    // MLA: q_a + kv_a projection (hidden -> q_lora + kv_lora + rope); GQA: fused qkv
  kQkNormAllreduce,  // attention TP, q/k norms over all heads (MiniMax-M2): AllReduce of the q, k variances
  kNormRopeKvWrite,  // q_a / kv_a RMSNorm + RoPE + KV cache write (+ indexer key write on full layers)
  kQBProj,           // q_b projection (+ W_UK absorption into the latent space)
  kIndexerScore,     // indexer q/k projections and scoring of every cached key (full layers only)
  kTopkSelect,       // top-k over the indexer scores (full layers only; shared layers reuse the indices)
  kSparseMla,        // attention over the selected keys (GQA: dense attention over the context); full layers
  kWindowAttn,       // attention of sliding-window / chunked layers over at most window_tokens keys
  kOProj,            // W_UV + o_proj
  // Linear-attention layers (ModelConfig::mixers), priced over their own count; the ops above then run on
  // the attention layers only (docs/layers.md).
  kGdnProj,     // Gated DeltaNet: in_proj_qkvz + in_proj_ba (hidden -> q, k, v, z, b, a) and out_proj
  kGdnScan,     // Gated DeltaNet: causal conv1d + gated delta rule (chunked in prefill), state read + write
  kMamba2Proj,  // Mamba-2: in_proj (hidden -> z, x, B, C, dt) and out_proj
  kMamba2Scan,  // Mamba-2: causal conv1d + selective state-space scan (chunked in prefill), state read +
                // write
  kKdaProj,     // Kimi Delta Attention: q, k, v, the decay gate (f_a, f_b), beta, the output gate, o_proj
  kKdaScan,  // Kimi Delta Attention: q / k / v short convs + the delta rule with per-channel decay (chunked
             // in prefill), state read + write
  kAttnAllreduce,   // pure TP: AllReduce after o_proj
  kReduceScatter,   // DP attention: ReduceScatter after attention
  kDenseMlp,        // dense layers' MLP (gate/up/down)
  kDenseAllreduce,  // DP attention: AllReduce over all GPUs after the dense MLP (SGLang: gather + MLP's)
  kRouter,          // MoE gate + grouped top-k
  kLatentProj,      // latent MoE (Nemotron 3 Super): fc1 (hidden -> latent) and fc2 (latent -> hidden) GEMMs
  kDispatch,        // EP: all-to-all of each token to its experts (FP8)
  kExpertGemm,      // routed experts' grouped GEMMs (w1, w3, w2)
  kSharedExpert,    // shared expert MLP
  kCombine,         // EP: all-to-all back (BF16)
  kMlpAllreduce,    // pure TP: AllReduce after the MLP / MoE
  kLmHead,          // vocab-parallel LM head GEMM (decode tokens and last prefill chunks only)
  kVocabAllgather,  // AllGather of FP32 logits over the vocab shards
  kSample,          // sampling (decode tokens and last prefill chunks)
  kMtpDraft,        // MTP layer forward when speculative decoding is on
  kCount,
};
inline constexpr int kOpCount = static_cast<int>(Op::kCount);

enum class CollectiveKind { kNone, kAllReduce, kAllGather, kReduceScatter, kAllToAll };

std::string_view op_name(Op op);  // the seed's names: "rmsnorm", "a_proj", ...
// op_name() views a string literal: .data() is null-terminated with static storage (OpSpan::name uses it).
std::optional<Op> find_op(std::string_view name);  // the op op_name() calls `name`; nullopt for none
// kNone for compute ops. Inline: step_cost asks it of every op of every rank of every step.
constexpr CollectiveKind op_collective(Op op) {
  switch (op) {
    case Op::kEmbedAllreduce:
    case Op::kQkNormAllreduce:
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
    case Op::kAttnRes:
    case Op::kAProj:
    case Op::kNormRopeKvWrite:
    case Op::kQBProj:
    case Op::kIndexerScore:
    case Op::kTopkSelect:
    case Op::kSparseMla:
    case Op::kWindowAttn:
    case Op::kOProj:
    case Op::kGdnProj:
    case Op::kGdnScan:
    case Op::kMamba2Proj:
    case Op::kMamba2Scan:
    case Op::kKdaProj:
    case Op::kKdaScan:
    case Op::kDenseMlp:
    case Op::kRouter:
    case Op::kLatentProj:
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
// GPUs taking part in one call of a collective: tp for the attention's, q/k norms' and MLP's AllReduce under
// pure TP, ep for dispatch/combine, all GPUs of the instance otherwise; 0 for compute ops.
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

// GPUs one NVLink/NVSwitch domain holds when the hardware does not say (HGX H100/H200/B200: 8); larger
// instances put collectives on IB.
inline constexpr int kNvlinkDomainGpus = 8;

}  // namespace tokenline
