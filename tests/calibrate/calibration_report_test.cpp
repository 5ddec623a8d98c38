#include "calibrate/calibration_report.h"

#include <catch2/catch.hpp>

using namespace tokenline;

namespace {

E2ePoint point(const char* model, E2eMode mode, double ttft_ms, double tpot_ms) {
  E2ePoint p;
  p.model_path = model;
  p.mode = mode;
  p.ttft_ms = ttft_ms;
  p.tpot_ms = tpot_ms;
  return p;
}

SimPrediction predicted(double ttft_ms, double tpot_ms) {
  SimPrediction p;
  p.ok = true;
  p.ttft_ms = ttft_ms;
  p.tpot_ms = tpot_ms;
  p.completed = 1;
  return p;
}

}  // namespace

TEST_CASE("MAPE per model and mode, failed runs count 100%, groups weigh equally", "[calibration_report]") {
  const std::vector<E2ePoint> points = {
      point("org/A", E2eMode::kAggregated, 100, 10), point("org/A", E2eMode::kAggregated, 200, 20),
      point("org/A", E2eMode::kDisaggregated, 100, 10), point("org/B", E2eMode::kAggregated, 50, 5)};
  const std::vector<size_t> all = {0, 1, 2, 3};
  const std::vector<SimPrediction> pred = {predicted(110, 5), predicted(200, 30), SimPrediction{},
                                           predicted(50, 5)};
  const std::vector<GroupError> g = group_errors(points, all, pred);
  REQUIRE(g.size() == 3);
  CHECK(g[0].model == "A");
  CHECK(g[0].points == 2);
  CHECK(g[0].ttft_mape == Approx(0.05));  // (10% + 0%) / 2
  CHECK(g[0].tpot_mape == Approx(0.5));   // (50% + 50%) / 2
  CHECK(g[1].mode == E2eMode::kDisaggregated);
  CHECK(g[1].failed == 1);
  CHECK(g[1].ttft_mape == 1.0);
  CHECK(g[2].ttft_mape == 0.0);
  // ((0.05 + 0.5) / 2 + (1 + 1) / 2 + 0) / 3
  CHECK(fit_objective(g) == Approx((0.275 + 1.0 + 0.0) / 3));
  // A point 5x off reports its 400% but weighs in the objective as 100%, like a failed run.
  const std::vector<GroupError> far = group_errors(points, {3}, {predicted(250, 5)});
  CHECK(far[0].ttft_mape == Approx(4.0));
  CHECK(fit_objective(far) == Approx((1.0 + 0.0) / 2));
  const std::vector<GroupError> subset = group_errors(points, {3}, {predicted(25, 5)});
  REQUIRE(subset.size() == 1);
  CHECK(subset[0].ttft_mape == Approx(0.5));
}

TEST_CASE("MAPE per deployment splits a model's group by layout", "[calibration_report]") {
  const std::vector<E2ePoint> points = {
      point("org/A", E2eMode::kAggregated, 100, 10), point("org/A", E2eMode::kAggregated, 100, 10),
      point("org/A", E2eMode::kAggregated, 100, 10), point("org/B", E2eMode::kAggregated, 100, 10)};
  const std::vector<std::string> layouts = {"tp2", "tp8", "tp2", "tp8"};
  const std::vector<SimPrediction> pred = {predicted(110, 10), predicted(150, 10), predicted(130, 10),
                                           predicted(100, 12)};
  const std::vector<GroupError> by_model = group_errors(points, {0, 1, 2, 3}, pred);
  const std::vector<GroupError> by_deployment = deployment_errors(points, {0, 1, 2, 3}, layouts, pred);
  REQUIRE(by_model.size() == 2);
  CHECK(by_model[0].layout.empty());
  CHECK(by_model[0].ttft_mape == Approx(0.3));  // (10% + 50% + 30%) / 3
  REQUIRE(by_deployment.size() == 3);
  CHECK(by_deployment[0].model == "A");
  CHECK(by_deployment[0].layout == "tp2");
  CHECK(by_deployment[0].points == 2);
  CHECK(by_deployment[0].ttft_mape == Approx(0.2));  // (10% + 30%) / 2
  CHECK(by_deployment[1].layout == "tp8");
  CHECK(by_deployment[1].ttft_mape == Approx(0.5));
  CHECK(by_deployment[2].model == "B");
  CHECK(by_deployment[2].tpot_mape == Approx(0.2));
  // `which` selects points; the layouts index with the points, not with `which`.
  const std::vector<GroupError> one = deployment_errors(points, {1}, layouts, {predicted(150, 10)});
  REQUIRE(one.size() == 1);
  CHECK(one[0].layout == "tp8");
}

TEST_CASE("Rows whose deployment is not recorded form their own group, outside the objective",
          "[calibration_report]") {
  std::vector<E2ePoint> points = {point("org/A", E2eMode::kDisaggregated, 100, 10),
                                  point("org/A", E2eMode::kDisaggregated, 100, 10)};
  points[1].decode.workers_recorded = false;
  const std::vector<GroupError> g = group_errors(points, {0, 1}, {predicted(100, 10), predicted(500, 10)});
  REQUIRE(g.size() == 2);
  CHECK(g[0].apart == SetApart::kNo);
  CHECK(group_mode(g[0]) == "disagg");
  CHECK(g[1].apart == SetApart::kDeploymentUnrecorded);
  CHECK(group_mode(g[1]) == "disagg?");
  CHECK(g[1].ttft_mape == Approx(4.0));  // reported as it is
  CHECK(fit_objective(g) == 0.0);        // but only the recorded group counts
}

TEST_CASE(
    "Rows whose measured rate needs more prefill than the instance has form their own group, outside "
    "the objective",
    "[calibration_report]") {
  std::vector<E2ePoint> points = {point("org/A", E2eMode::kAggregated, 100, 10),
                                  point("org/A", E2eMode::kAggregated, 100, 10),
                                  point("org/A", E2eMode::kDisaggregated, 100, 10)};
  points[1].prefill_overloaded = true;
  points[2].prefill_overloaded = true;
  points[2].prefill.workers_recorded = false;  // an unrecorded deployment says so first
  CHECK(set_apart(points[0]) == SetApart::kNo);
  CHECK(set_apart(points[1]) == SetApart::kPrefillOverloaded);
  CHECK(set_apart(points[2]) == SetApart::kDeploymentUnrecorded);
  const std::vector<GroupError> g =
      group_errors(points, {0, 1, 2}, {predicted(100, 10), predicted(300, 30), predicted(100, 10)});
  REQUIRE(g.size() == 3);
  CHECK(group_mode(g[0]) == "agg");
  CHECK(group_mode(g[1]) == "agg!");
  CHECK(group_mode(g[2]) == "disagg?");
  CHECK(g[1].tpot_mape == Approx(2.0));
  CHECK(fit_objective(g) == 0.0);
}

TEST_CASE("E2E is TTFT plus the mean output's later tokens at TPOT, one rule both sides",
          "[calibration_report]") {
  E2ePoint fixed = point("org/A", E2eMode::kAggregated, 200, 10);
  fixed.osl = 101;
  CHECK(request_latency_ms(fixed, 200, 10) == Approx(200 + 100 * 10));
  E2ePoint ranged = fixed;
  ranged.osl = 1024;
  ranged.length_range_ratio = 0.8;  // outputs uniform in [819, 1024]: mean 921.5
  CHECK(request_latency_ms(ranged, 0, 1) == Approx(920.5));

  // TTFT 3x late where E2E hardly moves: the queue in front of the engine, not the rate it sustains.
  const std::vector<GroupError> g =
      group_errors({fixed, fixed}, {0, 1}, {predicted(600, 10), predicted(200, 12)});
  REQUIRE(g.size() == 1);
  CHECK(g[0].ttft_mape == Approx(1.0));                               // (200% + 0%) / 2
  CHECK(g[0].e2e_mape == Approx((400.0 / 1200 + 200.0 / 1200) / 2));  // (33.3% + 16.7%) / 2
  CHECK(fit_objective(g) == Approx((0.5 + 0.1) / 2));  // TTFT capped per point; E2E reported, not fitted
  const std::vector<GroupError> failed = group_errors({fixed}, {0}, {SimPrediction{}});
  CHECK(failed[0].e2e_mape == 1.0);
}
