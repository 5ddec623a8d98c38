// Router: picks the instance for each arriving request by a Placement (engine/core/placement.h: the same
// policies, names and tie rules as an instance's attention-DP ranks), for the simulator's drivers and any
// multi-instance real engine alike. Reads the instances' state, never mutates it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/instance.h"
#include "engine/core/placement.h"

namespace tokenline {

class Router {
 public:
  Router(PlacementPolicy policy, int64_t page_tokens) : placement_(policy), page_tokens_(page_tokens) {}

  // REQUIRES: !instances.empty().
  int32_t pick(std::span<const Instance* const> instances, const RequestSpec& spec);

 private:
  Placement placement_;
  int64_t page_tokens_;
  std::vector<int64_t> loads_;   // scratch
  std::vector<int64_t> cached_;  // scratch
};

}  // namespace tokenline
