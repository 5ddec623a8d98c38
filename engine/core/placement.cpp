#include "engine/core/placement.h"

#include <cassert>

#include "common/mix64.h"

namespace tokenline {
namespace {

// The least loaded of the targets `among` admits (all when null), ties to the lowest index.
int32_t least_loaded(std::span<const int64_t> loads, std::span<const int64_t> cached, int64_t among) {
  int32_t best = -1;
  for (size_t t = 0; t < loads.size(); ++t) {
    if (!cached.empty() && cached[t] != among) continue;
    if (best < 0 || loads[t] < loads[static_cast<size_t>(best)]) best = static_cast<int32_t>(t);
  }
  return best;
}

}  // namespace

std::string_view to_string(PlacementPolicy policy) {
  for (const PlacementName& n : kPlacementNames)
    if (n.policy == policy) return n.name;
  return "?";
}

std::optional<PlacementPolicy> parse_placement(std::string_view name) {
  for (const PlacementName& n : kPlacementNames)
    if (n.name == name) return n.policy;
  return std::nullopt;
}

std::string placement_choices() {
  std::string out;
  const size_t count = std::size(kPlacementNames);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out += i + 1 == count ? " or " : ", ";
    out += kPlacementNames[i].name;
  }
  return out;
}

int32_t Placement::pick(std::span<const int64_t> loads, std::span<const int64_t> cached_tokens) {
  assert(!loads.empty() && "a placement needs a target");
  const auto n = static_cast<int64_t>(loads.size());
  const int64_t pick_index = picks_++;
  if (n == 1) return 0;
  switch (policy_) {
    case PlacementPolicy::kRoundRobin:
      return static_cast<int32_t>(pick_index % n);
    case PlacementPolicy::kRoom:  // the sequence number mixed: a uniform, reproducible room id
      return static_cast<int32_t>(mix64(static_cast<uint64_t>(pick_index)) % static_cast<uint64_t>(n));
    case PlacementPolicy::kLeastLoad:
      return least_loaded(loads, {}, 0);
    case PlacementPolicy::kPrefixAware: {
      assert(cached_tokens.size() == loads.size() && "prefix-aware reads every target's cache");
      int64_t longest = 0;
      for (int64_t c : cached_tokens) longest = c > longest ? c : longest;
      return longest > 0 ? least_loaded(loads, cached_tokens, longest) : least_loaded(loads, {}, 0);
    }
  }
  return 0;
}

}  // namespace tokenline
