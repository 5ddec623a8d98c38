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

TEST_CASE("the cost block's price: the list price by default, given, or none", "[cli][cost]") {
  ScaleOptions o;
  std::string defaulted;
  const CostConfig list = cost_config(o, "h200", &defaulted);  // no --gpu-price: the list price, said so
  CHECK(list.usd_per_gpu_hour == 4.54);
  CHECK(defaulted.find("$4.54/GPU-hour") != std::string::npos);
  CHECK(defaulted.find("no --gpu-price") != std::string::npos);
  defaulted.clear();
  CHECK_FALSE(cost_config(o, "b300", &defaulted).enabled());      // no list price: no cost block, no error,
  CHECK(defaulted.find("b300 lists none") != std::string::npos);  // and the defaults say why
  CHECK(defaulted.find("--gpu-price USD") != std::string::npos);
  defaulted.clear();
  o.gpu_price = "none";
  CHECK_FALSE(cost_config(o, "h200", &defaulted).enabled());
  CHECK(defaulted.empty());
  CHECK_NOTHROW(check_scale_options(o, 1, false));
  o.gpu_price = "list";
  CHECK_THROWS_AS(cost_config(o, "b300"), InputError);  // asked for, and none listed
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

TEST_CASE("PD pools: bounds as xPyD, the prefill pool by queue and the decode pool by KV",
          "[cli][autoscale]") {
  ScaleOptions o;
  o.pd_max = "3P4D";
  o.prefill_target = 2;
  o.decode_target = 0.6;
  REQUIRE(error_of(o) == "no error");
  const PdScaleBounds b = pd_scale_bounds(o, 1, 2);
  CHECK(b.max_prefill == 3);
  CHECK(b.max_decode == 4);
  CHECK(b.min_prefill == 1);
  CHECK(b.min_decode == 1);
  const AutoscaleConfig p = pd_autoscale_config(o, b, true, 1, 16e9, 50e9);
  const AutoscaleConfig d = pd_autoscale_config(o, b, false, 2, 16e9, 50e9);
  CHECK(p.metric == ScaleMetric::kQueue);
  CHECK(p.target == 2);
  CHECK(p.max_instances == 3);
  CHECK(p.initial_instances == 1);
  CHECK(d.metric == ScaleMetric::kKv);
  CHECK(d.target == 0.6);
  CHECK(d.max_instances == 4);
  CHECK(d.initial_instances == 2);
  CHECK(d.weights_load_s == Approx(0.32));  // the same cold start as a co-located fleet's
  auto bound_error = [&](const std::string& max, const std::string& min, int32_t prefill, int32_t decode) {
    ScaleOptions e = o;
    e.pd_max = max;
    e.pd_min = min;
    try {
      pd_scale_bounds(e, prefill, decode);
    } catch (const InputError& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  CHECK(bound_error("3P", "1P1D", 1, 1).find("--pd-max: expected xPyD") == 0);
  CHECK(bound_error("0P2D", "1P1D", 1, 1).find("--pd-max") == 0);
  CHECK(bound_error("2P2D", "1P1D", 3, 1).find("--pd-max: expected at least --pd 3P1D") == 0);
  CHECK(bound_error("4P4D", "2P1D", 1, 1).find("--pd-min: expected at most --pd 1P1D") == 0);
  auto with = [&](auto edit) {
    ScaleOptions e = o;
    edit(e);
    return error_of(e);
  };
  CHECK(with([](ScaleOptions& e) { e.prefill_target = 0; }).find("--autoscale-prefill-target") == 0);
  CHECK(with([](ScaleOptions& e) { e.decode_target = 1.5; }).find("--autoscale-decode-target") == 0);
  CHECK(with([](ScaleOptions& e) { e.metric = "kv"; }).find("--autoscale:") == 0);
  CHECK(with([](ScaleOptions& e) { e.target = 3; }).find("--autoscale-target") == 0);
  CHECK(with([](ScaleOptions& e) { e.max_instances = 4; }).find("--max-instances") == 0);
  ScaleOptions plain;
  plain.decode_target = 0.5;  // a pool target without --pd-max
  CHECK(error_of(plain).find("--pd-max with them") != std::string::npos);
}

}  // namespace
}  // namespace tokenline::cli
