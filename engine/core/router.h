// Router: picks the instance for each arriving request (round-robin, least-load, prefix-aware), for the
// simulator's drivers and any multi-instance real engine alike. Reads the
// instances' state, never mutates it. Ties break to the lowest instance index (deterministic).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "engine/core/instance.h"

namespace tokenline {

enum class RouterPolicy { kRoundRobin, kLeastLoad, kPrefixAware };
std::string_view to_string(RouterPolicy policy);  // "round-robin", "least-load", "prefix-aware"

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
