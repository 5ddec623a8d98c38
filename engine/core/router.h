// Router: picks the instance for each arriving request by a Placement (engine/core/placement.h: the same
// policies, names and tie rules as an instance's attention-DP ranks), for the simulator's drivers and any
// multi-instance real engine alike. Reads the instances' state, never mutates it: it is a front end per
// instance that sees that instance's cache (the longest prefix any of its ranks holds) and load (its
// ranks' queued + running tokens) as they are at the pick - what Dynamo's router learns from KV events
// and its own request tracking, here without their lag.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/instance.h"
#include "engine/core/placement.h"

namespace tokenline {

class Router {
 public:
  // kv: kv-aware's weights (Dynamo's defaults unless given).
  Router(PlacementPolicy policy, int64_t page_tokens, KvAwareWeights kv = {})
      : placement_(policy, kv), page_tokens_(page_tokens) {}

  // REQUIRES: !instances.empty().
  int32_t pick(std::span<const Instance* const> instances, const RequestSpec& spec);

 private:
  Placement placement_;
  int64_t page_tokens_;
  std::vector<int64_t> loads_;   // scratch
  std::vector<int64_t> cached_;  // scratch
};

}  // namespace tokenline
