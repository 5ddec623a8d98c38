// LinkMeter: a transfer's bytes are spread over the windows it was in flight, per link direction.
#include "sim/simgrid/link_meter.h"

#include <catch2/catch.hpp>

namespace tokenline {
namespace {

sg::PlatformSpec two_links() {
  sg::PlatformSpec p;
  p.name = "test";
  p.links.push_back(
      {.name = "a", .link_class = sg::LinkClass::kNvlink, .bw_per_direction = 100, .latency_s = 0});
  p.links.push_back({.name = "b", .link_class = sg::LinkClass::kIb, .bw_per_direction = 10, .latency_s = 0});
  return p;
}

TEST_CASE("link meter spreads bytes over the windows a transfer spans and keeps directions apart") {
  const sg::PlatformSpec p = two_links();
  LinkMeter meter(p, 1.0);
  meter.add(0, 0.5, 2.5, 200);  // link a up: 50 in window 0, 100 in window 1, 50 in window 2
  meter.add(3, 1.0, 1.0, 7);    // link b down: instantaneous
  CHECK(meter.total_bytes(0) == Approx(200));
  CHECK(meter.total_bytes(1) == 0);
  CHECK(meter.total_bytes(3) == Approx(7));
}

}  // namespace
}  // namespace tokenline
