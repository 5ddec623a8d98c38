#include "engine/core/placement.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

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

KvAwareCost kv_aware_cost(int64_t prompt_tokens, int64_t cached_tokens, int64_t load_tokens,
                          int64_t block_tokens, double overlap_score_weight) {
  const auto block = static_cast<double>(block_tokens > 0 ? block_tokens : 1);
  const int64_t uncached = prompt_tokens > cached_tokens ? prompt_tokens - cached_tokens : 0;
  KvAwareCost c;
  c.prefill_blocks = static_cast<double>(uncached) / block;
  c.active_blocks = static_cast<double>(load_tokens + prompt_tokens) / block;
  c.logit = overlap_score_weight * c.prefill_blocks + c.active_blocks;
  return c;
}

// Temperature 0: the lowest logit (Dynamo draws among equal lowest ones; here the lowest index). Else
// Dynamo's softmax_sample: logits over their spread (max - min), negated, over the temperature, softmax,
// one draw - here a uniform from the run's seed and the pick's sequence number, so runs repeat.
int32_t Placement::pick_kv_aware(std::span<const int64_t> loads, std::span<const int64_t> cached_tokens,
                                 int64_t prompt_tokens, int64_t pick_index) {
  assert(cached_tokens.size() == loads.size() && "kv-aware reads every target's cache");
  logits_.clear();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  int32_t best = 0;
  for (size_t t = 0; t < loads.size(); ++t) {
    // In tokens (block 1): integers stay exact, so equal costs compare equal; the choice is the same.
    const double logit =
        kv_aware_cost(prompt_tokens, cached_tokens[t], loads[t], 1, kv_.overlap_score_weight).logit;
    logits_.push_back(logit);
    if (logit < lo) best = static_cast<int32_t>(t);
    lo = std::min(lo, logit);
    hi = std::max(hi, logit);
  }
  if (!(kv_.temperature > 0)) return best;
  const uint64_t bits = mix64(kv_.seed ^ mix64(static_cast<uint64_t>(pick_index)));
  if (hi == lo) return static_cast<int32_t>(bits % logits_.size());  // equal costs: Dynamo's uniform draw
  double sum = 0;
  for (double& l : logits_) {
    l = std::exp((lo - l) / (hi - lo) / kv_.temperature);  // the largest term is exp(0) = 1
    sum += l;
  }
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53 * sum;  // uniform in [0, sum)
  double cumulative = 0;
  for (size_t t = 0; t < logits_.size(); ++t) {
    cumulative += logits_[t];
    if (u < cumulative) return static_cast<int32_t>(t);
  }
  return static_cast<int32_t>(logits_.size() - 1);
}

int32_t Placement::pick(std::span<const int64_t> loads, std::span<const int64_t> cached_tokens,
                        int64_t prompt_tokens) {
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
    case PlacementPolicy::kKvAware:
      return pick_kv_aware(loads, cached_tokens, prompt_tokens, pick_index);
  }
  return 0;
}

}  // namespace tokenline
