#include "engine/core/placement.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

namespace tokenline {

TEST_CASE("placement: one name table serves to_string, parsing and the CLI's choices", "[placement]") {
  for (const PlacementName& n : kPlacementNames) {
    CHECK(to_string(n.policy) == n.name);
    CHECK(parse_placement(n.name) == n.policy);
  }
  CHECK_FALSE(parse_placement("round_robin").has_value());  // one spelling
  CHECK(placement_choices() == "round-robin, least-load, prefix-aware, room or kv-aware");
}

TEST_CASE("placement: prefix-aware takes the least loaded of the targets holding the longest prefix",
          "[placement]") {
  Placement p(PlacementPolicy::kPrefixAware);
  REQUIRE(p.reads_caches());
  const std::vector<int64_t> loads{50, 10, 30, 5};
  // Targets 0 and 2 hold 1,024 cached tokens; 2 is the less loaded. Target 3 is the least loaded of all
  // but holds less.
  CHECK(p.pick(loads, std::vector<int64_t>{1024, 512, 1024, 0}) == 2);
  // A prefix every target holds (a shared system prompt) ties them all: load decides.
  CHECK(p.pick(loads, std::vector<int64_t>{512, 512, 512, 512}) == 3);
  // Nothing cached anywhere: least load.
  CHECK(p.pick(loads, std::vector<int64_t>{0, 0, 0, 0}) == 3);
  // Equal loads: the lowest index.
  CHECK(p.pick(std::vector<int64_t>{7, 7, 7}, std::vector<int64_t>{64, 64, 0}) == 0);
}

// SGLang's PD prefill sends a request to attention-DP rank bootstrap_room % ranks, rooms drawn at random: no
// rank is skipped and none is favoured over many requests, but a burst is not spread evenly as round-robin
// spreads it. The same sequence every run.
TEST_CASE("placement: room spreads picks uniformly but not evenly, the same every run", "[placement]") {
  Placement a(PlacementPolicy::kRoom), b(PlacementPolicy::kRoom);
  CHECK_FALSE(a.reads_caches());
  const std::vector<int64_t> loads(8, 0);
  std::vector<int32_t> count(8, 0);
  std::vector<int32_t> first_eight;
  for (int i = 0; i < 8000; ++i) {
    const int32_t r = a.pick(loads, {});
    REQUIRE(r == b.pick(loads, {}));
    REQUIRE((r >= 0 && r < 8));
    ++count[static_cast<size_t>(r)];
    if (i < 8) first_eight.push_back(r);
  }
  for (int32_t c : count) CHECK((c > 900 && c < 1100));  // 1000 each, within 3.4 standard deviations
  std::vector<int32_t> sorted = first_eight;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end());  // 8 picks, some rank twice
}

TEST_CASE("placement: round-robin counts picks, least-load ties go to the lowest index", "[placement]") {
  Placement rr(PlacementPolicy::kRoundRobin);
  CHECK_FALSE(rr.reads_caches());
  const std::vector<int64_t> loads{3, 1, 1};
  std::vector<int32_t> picks;
  for (int i = 0; i < 4; ++i) picks.push_back(rr.pick(loads, {}));
  CHECK(picks == std::vector<int32_t>{0, 1, 2, 0});
  Placement least(PlacementPolicy::kLeastLoad);
  CHECK(least.pick(loads, {}) == 1);
}

// Dynamo's cost: logit = overlap_score_weight x prefill blocks not cached + active blocks (load + prompt).
TEST_CASE("placement: kv-aware's cost counts the uncached prompt and the load in blocks", "[placement]") {
  const KvAwareCost c = kv_aware_cost(/*prompt*/ 4096, /*cached*/ 1024, /*load*/ 8192, /*block*/ 64, 2.0);
  CHECK(c.prefill_blocks == 48.0);                                   // (4096 - 1024) / 64
  CHECK(c.active_blocks == 192.0);                                   // (8192 + 4096) / 64
  CHECK(c.logit == 2.0 * 48.0 + 192.0);                              // weight x prefill + active
  CHECK(kv_aware_cost(100, 500, 0, 64, 1.0).prefill_blocks == 0.0);  // a cache longer than the prompt
}

// Target 0 holds 3,072 of the prompt's 4,096 tokens; target 1 holds none and is idle. Raising target 0's
// load moves its cost up one token at a time; it keeps the request exactly while its cost is not above
// target 1's: w x (4096 - 3072) + L + 4096 <= w x 4096 + 0 + 4096, i.e. L <= w x 3072 (ties to the lower
// index). Past that load the idle target wins, and the flip sits where the score says, for each weight.
TEST_CASE("placement: kv-aware prefers the cached target over an idle one only while its cost is lower",
          "[placement]") {
  constexpr int64_t kPrompt = 4096, kCached = 3072;
  for (const double weight : {0.5, 1.0, 2.0}) {
    Placement p(PlacementPolicy::kKvAware, KvAwareWeights{.overlap_score_weight = weight});
    REQUIRE(p.reads_caches());
    const auto flip = static_cast<int64_t>(weight * kCached);
    for (const int64_t load : {int64_t{0}, flip / 2, flip - 1, flip, flip + 1, flip + 64, 4 * flip}) {
      const std::vector<int64_t> loads{load, 0};
      const std::vector<int64_t> cached{kCached, 0};
      const double cached_cost = kv_aware_cost(kPrompt, kCached, load, 64, weight).logit;
      const double idle_cost = kv_aware_cost(kPrompt, 0, 0, 64, weight).logit;
      INFO("weight " << weight << ", load " << load);
      CHECK((cached_cost <= idle_cost) == (load <= flip));  // the score flips at the computed load
      CHECK(p.pick(loads, cached, kPrompt) == (load <= flip ? 0 : 1));
    }
  }
  // Weight 0 ignores the caches: pure load balance (Dynamo: "the router ignores prefix caches").
  Placement load_only(PlacementPolicy::kKvAware, KvAwareWeights{.overlap_score_weight = 0.0});
  CHECK(load_only.pick(std::vector<int64_t>{1, 0}, std::vector<int64_t>{kCached, 0}, kPrompt) == 1);
}

// Temperature > 0: Dynamo's softmax over the costs normalised by their spread. The cheapest target is the
// likeliest, a dearer one is still drawn, and the draws repeat for the same seed and change with another.
TEST_CASE("placement: kv-aware with a temperature draws by softmax, the same for the same seed",
          "[placement]") {
  const std::vector<int64_t> loads{0, 2048, 4096};
  const std::vector<int64_t> cached{0, 0, 0};
  Placement a(PlacementPolicy::kKvAware, KvAwareWeights{.temperature = 0.5, .seed = 7});
  Placement b(PlacementPolicy::kKvAware, KvAwareWeights{.temperature = 0.5, .seed = 7});
  Placement c(PlacementPolicy::kKvAware, KvAwareWeights{.temperature = 0.5, .seed = 8});
  std::vector<int32_t> count(3, 0);
  int32_t differ = 0;
  for (int i = 0; i < 3000; ++i) {
    const int32_t t = a.pick(loads, cached, 1024);
    REQUIRE(t == b.pick(loads, cached, 1024));
    differ += t != c.pick(loads, cached, 1024) ? 1 : 0;
    ++count[static_cast<size_t>(t)];
  }
  // Normalised costs 0, 0.5, 1 over temperature 0.5: weights 1, e^-1, e^-2 -> 66.5%, 24.5%, 9.0%.
  CHECK((count[0] > 1850 && count[0] < 2150));
  CHECK((count[1] > 600 && count[1] < 870));
  CHECK((count[2] > 170 && count[2] < 370));
  CHECK(differ > 0);
  // Temperature 0 never draws: the lowest cost every time.
  Placement greedy(PlacementPolicy::kKvAware);
  for (int i = 0; i < 10; ++i) CHECK(greedy.pick(loads, cached, 1024) == 0);
}

}  // namespace tokenline
