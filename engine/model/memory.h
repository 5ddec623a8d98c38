// Weight bytes per GPU and the KV capacity left after them, for sizing KV pools and batch limits.
#pragma once

#include <cstdint>

#include "engine/model/ledger.h"

namespace tokenline {

// Bytes of weights one GPU holds. Under EP the routed experts split ep ways; everything else
// ("replicated": attention, indexer, dense MLP, shared experts, router, norms, embedding, LM head)
// splits by the attention TP size (so it is replicated across DP attention ranks).
struct WeightBytes {
  double routed_experts = 0;
  double replicated = 0;
  double mtp = 0;  // only with CostOptions::mtp
  double total() const { return routed_experts + replicated + mtp; }
};
WeightBytes weight_bytes_per_gpu(const CostModel& cm);

struct KvCapacity {
  double usable_hbm_bytes = 0;          // per GPU: HBM x usable fraction
  double weight_bytes = 0;              // per GPU
  double activation_reserve_bytes = 0;  // per GPU: max_chunk_tokens x hidden x 2 B x kActivationBuffers
  double free_bytes = 0;                // per GPU, for main KV + indexer cache (0 when weights do not fit)
  double bytes_per_token = 0;           // one token of context on one GPU: (KV all layers + indexer) / tp
  int64_t tokens_per_rank = 0;          // tokens of context one attention rank can hold
  int64_t pages_per_rank = 0;           // pages of page_tokens
  int64_t max_concurrent_requests = 0;  // instance-wide, each holding `context` tokens
  bool weights_fit = false;
};

// Live activation buffers the reserve holds per chunk token (hidden, residual, q, kv latent, attention
// output, MoE input, MoE output, logits staging): 8 hidden-sized BF16 tensors.
inline constexpr int kActivationBuffers = 8;
inline constexpr int64_t kDefaultPageTokens = 64;  // SGLang's KV page (the seed: "按 64 token 一页分配")

// KV capacity of one instance for requests of `context` tokens.
KvCapacity kv_capacity(const CostModel& cm, int64_t context, int64_t page_tokens = kDefaultPageTokens);

}  // namespace tokenline
