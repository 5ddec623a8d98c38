// The fleet's bookkeeping (sim/driver/autoscaler_fleet.h): GPU-hours over the slots that are up, the
// policy's metric averaged over the window, and the SLO attainment per window.
#include "sim/driver/autoscaler_fleet.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

AutoscaleConfig policy(ScaleMetric metric) {
  AutoscaleConfig c;
  c.max_instances = 3;
  c.metric = metric;
  c.target = 1;
  c.interval_s = 10;
  c.window_s = 20;
  return c;
}

TEST_CASE("GPU-hours count each slot's GPUs while it is starting, live or draining", "[autoscaler]") {
  FleetLog log(policy(ScaleMetric::kQueue), {8, 8, 4}, false);
  log.set_state(0, SlotState::kLive, 0);
  log.set_state(1, SlotState::kStarting, 100);
  log.set_state(1, SlotState::kLive, 160);
  log.set_state(1, SlotState::kDraining, 1000);
  log.set_state(1, SlotState::kOff, 1100);
  log.set_state(2, SlotState::kStarting, 1200);
  log.set_state(2, SlotState::kOff, 1230);  // a start called off still paid its 30 s
  log.close(3600);
  // slot 0: 8 GPUs x 3600 s; slot 1: 8 x 1000 s; slot 2: 4 x 30 s.
  CHECK(log.gpu_hours() == Approx((8 * 3600.0 + 8 * 1000.0 + 4 * 30.0) / 3600.0));
  const auto j = nlohmann::json::parse(log.json());
  CHECK(j["cold_starts"] == 2);
  CHECK(j["cancelled_starts"] == 1);
  CHECK(j["drains"] == 1);
  CHECK(j["instances_peak"] == 2);
}

TEST_CASE("the queue metric is waiting requests per serving instance over the window", "[autoscaler]") {
  FleetLog log(policy(ScaleMetric::kQueue), {1, 1, 1}, false);
  log.set_state(0, SlotState::kLive, 0);
  log.set_state(1, SlotState::kLive, 0);
  log.on_load(0, 0, 6, 0, 0, 0);  // 6 waiting on instance 0 from 0 s
  log.on_load(0, 5, 2, 0, 0, 0);  // 2 from 5 s
  // Window [0, 10]: waiting 6 x 5 + 2 x 5 = 40 request-seconds over 2 instances x 10 s = 2 per instance.
  CHECK(*log.sync(10) == Approx(2.0));
  // Window [0, 20] (two syncs): 40 + 2 x 10 = 60 over 40 instance-seconds.
  CHECK(*log.sync(20) == Approx(1.5));
  // Window [10, 30]: 2 x 20 = 40 over 40.
  CHECK(*log.sync(30) == Approx(1.0));
}

TEST_CASE("the kv metric is pages used over pages held", "[autoscaler]") {
  FleetLog log(policy(ScaleMetric::kKv), {1, 1, 1}, false);
  log.set_state(0, SlotState::kLive, 0);
  log.on_load(0, 0, 0, 0, 25, 100);
  CHECK(*log.sync(10) == Approx(0.25));
}

TEST_CASE("SLO attainment is counted per window of finish times", "[autoscaler]") {
  FleetLog log(policy(ScaleMetric::kSlo), {1, 1, 1}, true);
  log.set_state(0, SlotState::kLive, 0);
  CHECK_FALSE(log.sync(10).has_value());  // nothing finished yet
  log.on_finished(12, true);
  log.on_finished(15, false);
  CHECK(*log.sync(20) == Approx(0.5));  // finished since the window began: 1 miss of 2
  log.on_finished(25, true);
  log.on_finished(45, true);
  log.close(50);
  const auto w = nlohmann::json::parse(log.json())["slo_windows"];
  REQUIRE(w.size() == 3);  // [0, 20), [20, 40), [40, 60)
  CHECK(w[0]["finished"] == 2);
  CHECK(w[0]["slo_attainment"] == Approx(0.5));
  CHECK(w[1]["finished"] == 1);
  CHECK(w[2]["slo_attainment"] == Approx(1.0));
}

}  // namespace
}  // namespace tokenline
