#include "engine/core/router.h"

#include <vector>

namespace tokenline {

int64_t Router::load_tokens(const Instance& instance) {
  int64_t tokens = 0;
  for (int32_t r = 0; r < instance.dp_ranks(); ++r) tokens += instance.rank(r).load_tokens();
  return tokens;
}

int32_t Router::least_loaded(std::span<const Instance* const> instances) {
  int32_t best = 0;
  int64_t best_load = load_tokens(*instances[0]);
  for (size_t i = 1; i < instances.size(); ++i) {
    const int64_t load = load_tokens(*instances[i]);
    if (load < best_load) {
      best = static_cast<int32_t>(i);
      best_load = load;
    }
  }
  return best;
}

int32_t Router::pick(std::span<const Instance* const> instances, const RequestSpec& spec) {
  const auto n = static_cast<int64_t>(instances.size());
  if (n == 1) return 0;
  switch (policy_) {
    case RouterPolicy::kRoundRobin:
      return static_cast<int32_t>(next_++ % n);
    case RouterPolicy::kLeastLoad:
      return least_loaded(instances);
    case RouterPolicy::kPrefixAware: {
      const std::vector<uint64_t> keys = derive_page_keys(spec, page_tokens_);
      int32_t best = -1;
      int64_t best_hit = 0;
      for (size_t i = 0; i < instances.size(); ++i) {
        for (int32_t r = 0; r < instances[i]->dp_ranks(); ++r) {
          const int64_t hit = instances[i]->rank(r).cached_prefix_tokens(keys);
          if (hit > best_hit) {
            best = static_cast<int32_t>(i);
            best_hit = hit;
          }
        }
      }
      return best >= 0 ? best : least_loaded(instances);
    }
  }
  return 0;
}

std::string_view to_string(RouterPolicy policy) {
  switch (policy) {
    case RouterPolicy::kRoundRobin:
      return "round-robin";
    case RouterPolicy::kLeastLoad:
      return "least-load";
    case RouterPolicy::kPrefixAware:
      return "prefix-aware";
  }
  return "";
}

}  // namespace tokenline
