#include "calibrate/bounded_search.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

using namespace tokenline;

TEST_CASE("Golden-section finds an interior minimum to the tolerance", "[bounded_search]") {
  int calls = 0;
  const auto f = [&](double x) {
    ++calls;
    return (x - 0.3) * (x - 0.3);
  };
  const double x = golden_section_minimize(f, {0.0, 1.0, false}, 1.0, {.tolerance = 0.01});
  CHECK(x == Approx(0.3).margin(0.01));
  CHECK(calls <= 14);  // 1 start + 2 probes + ceil(log(0.01) / log(0.618)) = 10 narrowings
}

TEST_CASE("Golden-section stays inside the bounds and reaches a bound minimum", "[bounded_search]") {
  std::vector<double> seen;
  const auto f = [&](double x) {
    seen.push_back(x);
    return -x;
  };
  const double x = golden_section_minimize(f, {1e-6, 30e-6, true}, 2e-6, {.tolerance = 0.01});
  CHECK(x == Approx(30e-6).epsilon(0.05));
  for (double s : seen) {
    CHECK(s >= 1e-6);
    CHECK(s <= 30e-6);
  }
}

TEST_CASE("Golden-section keeps the start on a flat objective", "[bounded_search]") {
  const double x = golden_section_minimize([](double) { return 1.0; }, {0.0, 1.0, false}, 0.7, {});
  CHECK(x == 0.7);
}

TEST_CASE("Coordinate descent minimises a separable bowl and repeats itself exactly", "[bounded_search]") {
  const auto f = [](const std::vector<double>& v) {
    return (v[0] - 0.25) * (v[0] - 0.25) + std::pow(std::log(v[1] / 8e-6), 2);
  };
  const std::vector<SearchBounds> b = {{0.0, 1.0, false}, {1e-6, 50e-6, true}};
  const std::vector<double> x = coordinate_descent(f, b, {0.9, 2e-6}, {.tolerance = 0.01, .sweeps = 2});
  CHECK(x[0] == Approx(0.25).margin(0.01));
  CHECK(x[1] == Approx(8e-6).epsilon(0.05));
  CHECK(coordinate_descent(f, b, {0.9, 2e-6}, {.tolerance = 0.01, .sweeps = 2}) == x);
}
