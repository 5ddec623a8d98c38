// Placement: where a request goes - which instance (the Router, across instances) or which attention-DP
// rank inside an instance (Instance) - with one policy type, one spelling and one tie rule for both.
// round-robin: arrival order; least-load: the fewest queued + running tokens; prefix-aware: among the
// targets whose caches hold the longest prefix of the prompt, the least loaded (a prefix every target
// holds, such as a shared system prompt, ties them all, so load decides); with no cached prefix anywhere,
// least-load; room: a pseudo-random target per request, as SGLang's PD prefill picks its attention-DP rank
// (bootstrap_room % ranks, server_args.py _handle_load_balance_method, with the random room ids routers
// draw), here a hash of the pick's sequence number; kv-aware: the lowest cost by Dynamo's KV router
// (kv_aware_cost below), or with a temperature a softmax draw over the costs as Dynamo samples. Ties go to
// the lowest index. Deterministic; no clock. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

enum class PlacementPolicy { kRoundRobin, kLeastLoad, kPrefixAware, kRoom, kKvAware };

// The one name table: to_string, parsing and the CLI's "expected" text all read it.
struct PlacementName {
  PlacementPolicy policy;
  std::string_view name;
};
inline constexpr PlacementName kPlacementNames[] = {{PlacementPolicy::kRoundRobin, "round-robin"},
                                                    {PlacementPolicy::kLeastLoad, "least-load"},
                                                    {PlacementPolicy::kPrefixAware, "prefix-aware"},
                                                    {PlacementPolicy::kRoom, "room"},
                                                    {PlacementPolicy::kKvAware, "kv-aware"}};
std::string_view to_string(PlacementPolicy policy);
std::optional<PlacementPolicy> parse_placement(std::string_view name);
std::string placement_choices();  // "round-robin, least-load, prefix-aware, room or kv-aware"

// kv-aware's weights, as Dynamo's KV router names and defaults them (ai-dynamo/dynamo, KvRouterConfig and
// DefaultWorkerSelector in lib/llm/src/kv_router/scheduler.rs; docs/architecture/kv_cache_routing.md).
struct KvAwareWeights {
  double overlap_score_weight = 1.0;  // --kv-overlap-score-weight, default 1.0: weight of the prefill term
  double temperature = 0.0;           // --router-temperature, default 0.0: the lowest cost, no draw
  uint64_t seed = 0;                  // temperature > 0: the run's seed, for the softmax draw
};

// One target's cost under Dynamo's KV router, in blocks of `block_tokens` (lower is better):
//   logit = overlap_score_weight x potential_prefill_blocks + potential_active_blocks
// potential_prefill_blocks: the prompt's tokens the target's cache does not hold, over the block size
// (Dynamo: isl - overlap_blocks x block_size, plus the worker's queued prefill, which tokenline counts in
// the load term instead). potential_active_blocks: the target's load (queued + running tokens: prompt and
// requested output, Scheduler::load_tokens) plus the new prompt, over the block size - the KV the
// target's requests hold once this one joins them (Dynamo tracks its workers' active blocks from routing
// and completion events; tokenline reads the instance's own counters, an exact and lag-free front end).
struct KvAwareCost {
  double prefill_blocks = 0;
  double active_blocks = 0;
  double logit = 0;
};
KvAwareCost kv_aware_cost(int64_t prompt_tokens, int64_t cached_tokens, int64_t load_tokens,
                          int64_t block_tokens, double overlap_score_weight);

class Placement {
 public:
  // kv-aware compares costs in tokens: the choice is the same as in blocks (every cost scales by the block
  // size alike, and the softmax normalises by their spread, as Dynamo's does).
  explicit Placement(PlacementPolicy policy, KvAwareWeights kv = {}) : policy_(policy), kv_(kv) {}

  // True when pick reads cached_tokens (the caller then asks each target's cache for the prompt's prefix).
  bool reads_caches() const {
    return policy_ == PlacementPolicy::kPrefixAware || policy_ == PlacementPolicy::kKvAware;
  }
  // The target, given each target's load (queued + running tokens) and, when reads_caches(), the tokens
  // of the prompt's prefix its cache holds; prompt_tokens: the request's prompt (kv-aware reads it).
  // REQUIRES: !loads.empty(); cached_tokens empty or loads' size.
  int32_t pick(std::span<const int64_t> loads, std::span<const int64_t> cached_tokens,
               int64_t prompt_tokens = 0);
  PlacementPolicy policy() const { return policy_; }
  const KvAwareWeights& kv_weights() const { return kv_; }

 private:
  int32_t pick_kv_aware(std::span<const int64_t> loads, std::span<const int64_t> cached_tokens,
                        int64_t prompt_tokens, int64_t pick_index);

  PlacementPolicy policy_;
  KvAwareWeights kv_;
  int64_t picks_ = 0;           // round-robin cursor, room's hash input, kv-aware's draw index
  std::vector<double> logits_;  // scratch: kv-aware's costs
};

}  // namespace tokenline
