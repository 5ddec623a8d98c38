#include "plan/pareto_svg.h"

#include <catch2/catch.hpp>

namespace tokenline {
namespace {

TEST_CASE("the Pareto frontier keeps the points no other beats on both axes", "[plan]") {
  const std::vector<ParetoPoint> points = {
      {10, 100, "a"}, {20, 80, "b"}, {15, 70, "dominated by b"}, {30, 20, "c"}, {30, 10, "dominated by c"}};
  const std::vector<size_t> f = pareto_frontier(points);
  CHECK(f == std::vector<size_t>{0, 1, 3});
}

TEST_CASE("pareto.svg names its axes with units and marks the frontier", "[plan]") {
  const std::string svg = pareto_svg({{10, 100, "#1 2x tp8"}, {15, 70, "#2 <x>"}}, "model on 16x h200");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("tokens/s per user") != std::string::npos);
  CHECK(svg.find("output tokens/s per GPU") != std::string::npos);
  CHECK(svg.find("<polyline") != std::string::npos);
  CHECK(svg.find("#1 2x tp8") != std::string::npos);
  CHECK(svg.find("&lt;x&gt;") != std::string::npos);
  CHECK(pareto_svg({}, "t").find("no configuration meets the SLO") != std::string::npos);
}

}  // namespace
}  // namespace tokenline
