// Weight bytes per GPU and the KV capacity left after them, for sizing KV pools and batch limits. The one
// place KV bytes per token / per page are derived (every KvConfig and capacity figure calls these).
#pragma once

#include <cstdint>

#include "cost/engine_behavior.h"
#include "cost/step_cost.h"

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

// Share of one token's KV (main and indexer) that one GPU holds: num / den. kShardedOverTp: 1 / tp.
// kPerTpRank: MLA 1 / 1 (the latent is replicated on every TP rank); GQA ceil(kv_heads / tp) / kv_heads
// (each GPU keeps its heads' K and V; at least one head, so replicated when kv_heads < tp).
struct KvShare {
  int64_t num = 1;
  int64_t den = 1;
};
KvShare kv_share_per_gpu(const CostModel& cm, KvPlacement placement);
// The indexer side cache's share: the KV's, but 1 / 1 for MiniMax-M3's index keys under kPerTpRank (one
// shared head every GPU holds whole).
KvShare indexer_share_per_gpu(const CostModel& cm, KvPlacement placement);

// Bytes of one token's KV on one GPU: main KV of the full-attention layers, the DSA indexer cache, and the
// window layers' KV (held for at most window_tokens tokens of a request; 0 without window layers).
struct KvTokenBytes {
  double main = 0;
  double indexer = 0;
  double window = 0;
  double total() const { return main + indexer; }  // what grows with the context
};
KvTokenBytes kv_bytes_per_token_per_gpu(const CostModel& cm, KvPlacement placement);

// Bytes of one KV page of page_tokens tokens on one GPU (integer: KvConfig's unit). The one formula every
// KvConfig is sized with.
struct KvPageBytes {
  int64_t main = 0;     // full-attention layers
  int64_t indexer = 0;  // DSA indexer layers
  int64_t window = 0;   // window layers (their own pool: KvConfig::window)
};
KvPageBytes kv_page_bytes(const CostModel& cm, KvPlacement placement, int64_t page_tokens);

// A linear-attention model's recurrent-state slots on one attention rank (engine/core/state_pool.h). Under
// SGLang they are sized as its MambaPool (sglang_state_slots, engine_behavior.h, has the sources): by
// --max-running when the radix cache is off and the limit is given, else mamba_full_memory_ratio / (1 +
// ratio) of the memory left for caches; and SGLang counts each running request for 3 slots while the radix
// cache is on. Every other engine is sized by that ratio rule too, one slot a request; vLLM's hybrid KV
// cache manager instead draws each running request's state blocks from the KV pool itself
// (docs/layers.md). The KV pool gets the rest less what the slots take.
struct StateCapacity {
  int64_t bytes_per_slot = 0;             // one request's state, all linear layers, one GPU (linear_state.h)
  int64_t slots_per_rank = 0;             // 0: no linear layers
  double bytes = 0;                       // per GPU: slots_per_rank x bytes_per_slot
  int32_t slots_per_running_request = 1;  // SGLang with its radix cache: 3
  // The running requests the slots allow on one rank (SGLang's init_memory: slots // ratio).
  int64_t max_running_per_rank() const { return slots_per_rank / slots_per_running_request; }
};
StateCapacity linear_state_capacity(const CostModel& cm, const EngineBehavior& behavior, double free_bytes);

struct KvCapacity {
  double usable_hbm_bytes = 0;  // per GPU: device memory (less start-up memory) x the engine's fraction
  double mem_fraction = 0;      // the fraction used (engine's, or the hardware JSON's usable share)
  double reserved_bytes = 0;    // per GPU, kept back outside the fraction (SGLang: activations + graphs)
  double weight_bytes = 0;      // per GPU
  double activation_reserve_bytes =
      0;                        // per GPU, inside the fraction: chunk x hidden x 2 B x kActivationBuffers
                                // (0 under MemoryRule::kStaticFraction, whose reserve is outside), and
                                // attention residuals' snapshots under every rule (Kimi-K3)
  StateCapacity state;          // linear-attention state slots, taken out of the free bytes first
  double free_bytes = 0;        // per GPU, for main KV + indexer cache (0 when weights do not fit)
  double bytes_per_token = 0;   // one token of context on one GPU (kv_bytes_per_token_per_gpu)
  int64_t tokens_per_rank = 0;  // tokens of context one attention rank can hold
  int64_t pages_per_rank = 0;   // pages of page_tokens
  int64_t max_concurrent_requests = 0;  // instance-wide, each holding `context` tokens
  bool weights_fit = false;
  // Window layers (0 without): their KV of one token on one GPU, and the window pool the engine's rule
  // (EngineBehavior::window_pool) carves from free_bytes beside the full layers' tokens_per_rank.
  double window_bytes_per_token = 0;
  int64_t window_tokens_per_rank = 0;
  int64_t window_pages_per_rank = 0;
};

// Live activation buffers the reserve holds per chunk token (hidden, residual, q, kv latent, attention
// output, MoE input, MoE output, logits staging): 8 hidden-sized BF16 tensors.
inline constexpr int kActivationBuffers = 8;
inline constexpr int64_t kDefaultPageTokens = 64;  // SGLang's KV page (the seed: "按 64 token 一页分配")

// KV capacity of one instance for requests of `context` tokens under the seed's assumptions: KV sharded
// over TP, the hardware JSON's usable fraction minus an activation reserve for cm.options.max_chunk_tokens.
// `ledger` and the golden figures use this.
KvCapacity kv_capacity(const CostModel& cm, int64_t context, int64_t page_tokens = kDefaultPageTokens);

// The same under an engine's behaviour (placement, memory rule and fraction, chunk; resolve_engine).
// max_running: the engine's request limit per rank, which bounds a shared pool's window pages (kSharedPool;
// 0: behavior.max_running_requests, and where that is derived too, the ratio rule).
KvCapacity kv_capacity(const CostModel& cm, const EngineBehavior& behavior, int64_t context,
                       int64_t page_tokens = kDefaultPageTokens, int64_t max_running = 0);

}  // namespace tokenline
