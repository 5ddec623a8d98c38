// The scaling policy alone (sim/driver/autoscaler.h): HPA's ratio rule, its tolerance, min/max and the
// stabilisation windows that act as the cooldowns.
#include "sim/driver/autoscaler.h"

#include <catch2/catch.hpp>

namespace tokenline {
namespace {

AutoscaleConfig queue_policy() {
  AutoscaleConfig c;
  c.max_instances = 8;
  c.min_instances = 2;
  c.metric = ScaleMetric::kQueue;
  c.target = 4;  // waiting requests per instance
  c.interval_s = 15;
  c.scale_down_stabilization_s = 300;
  return c;
}

TEST_CASE("the count follows ceil(current x metric / target) outside the tolerance", "[autoscaler]") {
  Autoscaler a(queue_policy());
  CHECK(a.recommend(15, 2, 8.0) == 4);           // 2 x 8 / 4
  CHECK(a.recommend(30, 4, 4.3) == 4);           // ratio 1.075: within 0.1 of 1
  CHECK(a.recommend(45, 4, 5.0) == 5);           // ratio 1.25: ceil(5)
  CHECK(a.recommend(60, 5, std::nullopt) == 5);  // no sample: stays
}

TEST_CASE("the count stays within min and max instances", "[autoscaler]") {
  AutoscaleConfig c = queue_policy();
  c.scale_down_stabilization_s = 0;
  Autoscaler a(c);
  CHECK(a.recommend(15, 2, 400.0) == 8);  // wants 200
  CHECK(a.recommend(30, 8, 0.0) == 2);    // wants 0
  CHECK(a.recommend(45, 2, 0.0) == 2);
}

TEST_CASE("no scale-down within the stabilisation window of a higher recommendation", "[autoscaler]") {
  Autoscaler a(queue_policy());
  REQUIRE(a.recommend(15, 2, 16.0) == 8);
  // The load is gone at once, but the window (300 s) still holds the recommendation of 8 made at 15 s.
  for (double t = 30; t < 315; t += 15) {
    INFO("t = " << t);
    CHECK(a.recommend(t, 8, 0.0) == 8);
    CHECK(a.last_raw() == 2);
  }
  CHECK(a.recommend(315, 8, 0.0) == 2);  // 300 s after (HPA: only recommendations after the cutoff count)
}

TEST_CASE("a scale-down goes to the highest recommendation left in the window", "[autoscaler]") {
  Autoscaler a(queue_policy());
  REQUIRE(a.recommend(0, 2, 12.0) == 6);
  REQUIRE(a.recommend(100, 6, 2.0) == 6);  // raw 3, held at 6 by t = 0's
  CHECK(a.recommend(301, 6, 0.0) == 3);    // t = 0 left the window; t = 100 (3) is the highest
  CHECK(a.recommend(401, 3, 0.0) == 2);
}

TEST_CASE("a scale-up stabilisation window waits until every recommendation in it is higher",
          "[autoscaler]") {
  AutoscaleConfig c = queue_policy();
  c.scale_up_stabilization_s = 60;
  Autoscaler a(c);
  CHECK(a.recommend(0, 2, 4.0) == 2);    // raw 2
  CHECK(a.recommend(15, 2, 16.0) == 2);  // raw 8, but t = 0 (2) is inside the up window
  CHECK(a.recommend(61, 2, 16.0) == 8);  // t = 0 left; t = 15 and 61 both say 8
}

TEST_CASE("the slo metric scales on the miss fraction against 1 - the attainment asked", "[autoscaler]") {
  AutoscaleConfig c = queue_policy();
  c.metric = ScaleMetric::kSlo;
  c.target = 0.9;  // misses allowed: 10%
  c.scale_down_stabilization_s = 0;
  Autoscaler a(c);
  CHECK(a.recommend(15, 2, 0.3) == 6);  // 3x the allowed misses
  CHECK(a.recommend(30, 6, 0.1) == 6);  // on target
  CHECK(a.recommend(45, 6, 0.0) == 2);  // no misses: down to min
}

TEST_CASE("the metric window is a whole number of sync periods", "[autoscaler]") {
  AutoscaleConfig c;
  c.interval_s = 15;
  c.window_s = 60;
  CHECK(c.window_ticks() == 4);
  c.window_s = 15;
  CHECK(c.window_ticks() == 1);
  c.window_s = 50;
  CHECK(c.window_ticks() == 3);
}

}  // namespace
}  // namespace tokenline
