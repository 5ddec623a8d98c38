#include "calibrate/fit_parameter.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"

using namespace tokenline;

TEST_CASE("Every fit parameter is named, bounded and explained", "[fit_parameter]") {
  for (const FitParameter& p : fit_parameters()) {
    CAPTURE(p.name);
    CHECK_FALSE(p.name.empty());
    CHECK(p.lower < p.upper);
    CHECK((!p.log_scale || p.lower > 0));
    CHECK(p.why.size() > 20);
  }
}

TEST_CASE("fit lists (--fit) resolve in the order given and reject unknown or repeated names",
          "[fit_parameter]") {
  const auto fit = parse_fit_list("collective_launch_s,kernel_launch_s");
  REQUIRE(fit.size() == 2);
  CHECK(fit[0].name == "collective_launch_s");
  CHECK(fit[0].field == "collective_launch_s");
  CHECK(fit[1].group == "overheads");
  CHECK_THROWS_WITH(parse_fit_list("kernel_launch_s,step_overhead"),
                    Catch::StartsWith("--fit: expected names from kernel_launch_s") &&
                        Catch::EndsWith("found 'step_overhead'"));
  CHECK_THROWS_WITH(parse_fit_list("hbm_efficiency,hbm_efficiency"), Catch::Contains("twice"));
}

TEST_CASE("issue 43: vLLM's serial step terms can be fitted by name, as profile timing terms",
          "[fit_parameter]") {
  const auto fit = parse_fit_list("sync_step_cpu_s,sync_step_cpu_per_request_s");
  REQUIRE(fit.size() == 2);
  for (const FitParameter& p : fit) {
    CAPTURE(p.name);
    CHECK(p.target == FitTarget::kProfileSet);
    CHECK(p.group == "timing");
    CHECK(p.field == p.name);
    CHECK(p.lower == 0.0);
  }
}
