#include "plan/rate_search.h"

#include <catch2/catch.hpp>

namespace tokenline {
namespace {

TEST_CASE("the rate search starts at the lowest rate and stops when that misses", "[plan]") {
  RateSearch s(RateSearchOptions{.lo_log2 = -5, .hi_log2 = 3, .probes = 6});
  REQUIRE_FALSE(s.done());
  CHECK(s.next_log2() == -5.0);
  s.record(false);
  CHECK(s.done());
  CHECK_FALSE(s.found());
  CHECK(s.probes_run() == 1);
}

TEST_CASE("the rate search bisects between the highest rate met and the lowest missed", "[plan]") {
  RateSearch s(RateSearchOptions{.lo_log2 = -5, .hi_log2 = 3, .probes = 6});
  const bool outcomes[] = {true, true, false, true, false, false};
  const double expected[] = {-5, -1, 1, 0, 0.5, 0.25};
  for (int i = 0; i < 6; ++i) {
    REQUIRE_FALSE(s.done());
    CHECK(s.next_log2() == expected[i]);
    s.record(outcomes[i]);
  }
  CHECK(s.done());
  REQUIRE(s.found());
  CHECK(s.best_log2() == 0.0);
}

TEST_CASE("time scales are the inverse rate multipliers, printed to 6 digits", "[plan]") {
  CHECK(time_scale_text(-5) == "32");
  CHECK(time_scale_text(0) == "1");
  CHECK(time_scale_text(1) == "0.5");
  CHECK(time_scale_text(0.25) == "0.840896");
}

}  // namespace
}  // namespace tokenline
