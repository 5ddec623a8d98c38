#include "cost/tier_transfer.h"

#include <catch2/catch.hpp>

namespace tokenline {

namespace {
// PCIe 5.0 x16 per direction (topologies/hardware/h200.json host_link) and a round latency.
constexpr HostLinkSpec kPcie5{.bw_per_direction = 64e9, .latency_s = 10e-6};
}  // namespace

TEST_CASE("A tier transfer is latency plus bytes over one direction of the host link", "[cost][tier]") {
  CHECK(tier_transfer_s(kPcie5, 0) == 0);
  CHECK(tier_transfer_s(kPcie5, 6.4e9) == Approx(0.1 + 10e-6));
  CHECK(tier_transfer_s(HostLinkSpec{}, 1e9) == 0);  // no link: nothing priced (the CLI refuses the tier)
}

TEST_CASE("A layer-by-layer load hides behind a longer forward but for its first layer", "[cost][tier]") {
  // 61 layers (DeepSeek-V3). Load 61 ms, forward 610 ms: one layer's load (1 ms) shows.
  CHECK(tier_load_stall_s(0.061, 0.610, 61, TierLoadOverlap::kLayer) == Approx(0.001));
  // Load 610 ms, forward 61 ms: the forward hides all but its last layer's compute (1 ms) behind the load.
  CHECK(tier_load_stall_s(0.610, 0.061, 61, TierLoadOverlap::kLayer) == Approx(0.610 - 0.061 + 0.001));
  // A blocking load stalls the forward by all of it.
  CHECK(tier_load_stall_s(0.061, 0.610, 61, TierLoadOverlap::kNone) == Approx(0.061));
  // The stall never falls as the load grows.
  double last = 0;
  for (double load = 0; load < 1.0; load += 0.05) {
    const double stall = tier_load_stall_s(load, 0.3, 61, TierLoadOverlap::kLayer);
    CHECK(stall >= last);
    last = stall;
  }
}

TEST_CASE("A write-back store stalls the step before its loads", "[cost][tier]") {
  const TierTime t = price_tier(kPcie5, 0, 6.4e8, 0.5, 61, TierLoadOverlap::kLayer);
  CHECK(t.load_s == 0);
  CHECK(t.store_s == Approx(0.01 + 10e-6));
  CHECK(t.stall_s == Approx(t.store_s));
  const TierTime both = price_tier(kPcie5, 6.4e8, 6.4e8, 0.5, 61, TierLoadOverlap::kNone);
  CHECK(both.stall_s == Approx(both.store_s + both.load_s));
}

}  // namespace tokenline
