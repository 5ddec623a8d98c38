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
  CHECK(placement_choices() == "round-robin, least-load, prefix-aware or room");
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

}  // namespace tokenline
