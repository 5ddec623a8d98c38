// Router: picks the instance for each arriving request (round-robin, least-load, prefix-aware). Reads the
// instances' state, never mutates it. Ties break to the lowest instance index (deterministic).
#pragma once

#include <cstdint>
#include <span>

#include "engine/core/instance.h"
#include "sim/sim_config.h"

namespace tokenline {

class Router {
 public:
  Router(RouterPolicy policy, int64_t page_tokens) : policy_(policy), page_tokens_(page_tokens) {}

  // REQUIRES: !instances.empty().
  int32_t pick(std::span<const Instance* const> instances, const RequestSpec& spec);

 private:
  static int64_t load_tokens(const Instance& instance);
  static int32_t least_loaded(std::span<const Instance* const> instances);

  RouterPolicy policy_;
  int64_t page_tokens_;
  int64_t next_ = 0;  // round-robin cursor
};

}  // namespace tokenline
