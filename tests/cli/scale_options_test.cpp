// The cost and autoscaling flags of `tokenline sim` (cli/scale_options.h) judged and turned into the run's
// configuration: the cold start from weights and link, the list price, and refusals naming the flag.
#include "cli/scale_options.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/input_error.h"

namespace tokenline::cli {
namespace {

std::string error_of(const ScaleOptions& o, int32_t initial = 1, bool slo = false) {
  try {
    check_scale_options(o, initial, slo);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("a cold start is the weights over the link plus the engine start-up", "[cli][autoscale]") {
  ScaleOptions o;
  o.max_instances = 4;
  o.target = 8;
  REQUIRE(error_of(o) == "no error");
  AutoscaleConfig a = autoscale_config(o, 1, 16e9, 50e9);  // 16 GB per GPU over a 400 Gb/s NIC
  CHECK(a.weights_load_s == Approx(0.32));
  CHECK(a.engine_start_s == kEngineStartS);
  CHECK(a.interval_s == 15);                   // HPA sync period
  CHECK(a.scale_down_stabilization_s == 300);  // HPA downscale stabilisation
  o.storage_gb_per_s = 2;
  CHECK(autoscale_config(o, 1, 16e9, 50e9).weights_load_s == Approx(8.0));
  o.cold_start_s = 90;
  a = autoscale_config(o, 2, 16e9, 50e9);
  CHECK(a.cold_start_s() == 90);
  CHECK(a.initial_instances == 2);
}

TEST_CASE("the cost block's price: none, given, or the hardware's list price", "[cli][cost]") {
  ScaleOptions o;
  CHECK_FALSE(cost_config(o, "h200").enabled());
  o.gpu_price = "3.5";
  CHECK(cost_config(o, "h200").usd_per_gpu_hour == 3.5);
  o.gpu_price = "list";
  const CostConfig c = cost_config(o, "h200");
  CHECK(c.usd_per_gpu_hour == 4.54);
  CHECK(c.price_source.find("2026-03-17") != std::string::npos);
}

TEST_CASE("autoscaling flags out of range are refused naming the flag", "[cli][autoscale]") {
  ScaleOptions o;
  o.max_instances = 4;
  o.target = 8;
  auto with = [&](auto edit) {
    ScaleOptions e = o;
    edit(e);
    return error_of(e);
  };
  CHECK(with([](ScaleOptions& e) { e.min_instances = 5; }).find("--min-instances") != std::string::npos);
  CHECK(with([](ScaleOptions& e) { e.metric = "cpu"; }).find("--autoscale") != std::string::npos);
  CHECK(with([](ScaleOptions& e) { e.tolerance = 1; }).find("--autoscale-tolerance") != std::string::npos);
  CHECK(with([](ScaleOptions& e) { e.interval_s = 0; }).find("--autoscale-interval") != std::string::npos);
  CHECK(with([](ScaleOptions& e) { e.scale_down_stabilization_s = -1; }).find("--scale-down-stabilization") !=
        std::string::npos);
  CHECK(with([](ScaleOptions& e) { e.target = 0; }).find("--autoscale-target") != std::string::npos);
  CHECK(error_of(o, 7).find("--instances") != std::string::npos);
  ScaleOptions fixed;
  fixed.target = 3;  // a target without --max-instances
  CHECK(error_of(fixed).find("--max-instances") != std::string::npos);
}

}  // namespace
}  // namespace tokenline::cli
