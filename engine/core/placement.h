// Placement: where a request goes - which instance (the Router, across instances) or which attention-DP
// rank inside an instance (Instance) - with one policy type, one spelling and one tie rule for both.
// round-robin: arrival order; least-load: the fewest queued + running tokens; prefix-aware: among the
// targets whose caches hold the longest prefix of the prompt, the least loaded (a prefix every target
// holds, such as a shared system prompt, ties them all, so load decides); with no cached prefix anywhere,
// least-load; room: a pseudo-random target per request, as SGLang's PD prefill picks its attention-DP rank
// (bootstrap_room % ranks, server_args.py _handle_load_balance_method, with the random room ids routers
// draw), here a hash of the pick's sequence number. Ties go to the lowest index. Deterministic; no clock.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tokenline {

enum class PlacementPolicy { kRoundRobin, kLeastLoad, kPrefixAware, kRoom };

// The one name table: to_string, parsing and the CLI's "expected" text all read it.
struct PlacementName {
  PlacementPolicy policy;
  std::string_view name;
};
inline constexpr PlacementName kPlacementNames[] = {{PlacementPolicy::kRoundRobin, "round-robin"},
                                                    {PlacementPolicy::kLeastLoad, "least-load"},
                                                    {PlacementPolicy::kPrefixAware, "prefix-aware"},
                                                    {PlacementPolicy::kRoom, "room"}};
std::string_view to_string(PlacementPolicy policy);
std::optional<PlacementPolicy> parse_placement(std::string_view name);
std::string placement_choices();  // "round-robin, least-load, prefix-aware or room"

class Placement {
 public:
  explicit Placement(PlacementPolicy policy) : policy_(policy) {}

  // True when pick reads cached_tokens (the caller then asks each target's cache for the prompt's prefix).
  bool reads_caches() const { return policy_ == PlacementPolicy::kPrefixAware; }
  // The target, given each target's load (queued + running tokens) and, when reads_caches(), the tokens
  // of the prompt's prefix its cache holds. REQUIRES: !loads.empty(); cached_tokens empty or loads' size.
  int32_t pick(std::span<const int64_t> loads, std::span<const int64_t> cached_tokens);
  PlacementPolicy policy() const { return policy_; }

 private:
  PlacementPolicy policy_;
  int64_t picks_ = 0;  // round-robin cursor, room's hash input
};

}  // namespace tokenline
