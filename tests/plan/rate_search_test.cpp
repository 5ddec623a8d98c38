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

TEST_CASE("a search that met at every rate probes the top, and widens above it when that meets too",
          "[plan]") {
  RateSearch s(
      RateSearchOptions{.lo_log2 = -5, .hi_log2 = 3, .probes = 3, .max_widenings = 1, .widen_log2 = 3});
  // -5 met, bisection -1, 1 met: the top (3) is probed; it meets, so [3, 6) is bisected with 2 probes
  // (4.5 misses, 3.75 meets); the limit is found, nothing capped.
  const bool outcomes[] = {true, true, true, true, false, true};
  const double expected[] = {-5, -1, 1, 3, 4.5, 3.75};
  for (int i = 0; i < 6; ++i) {
    REQUIRE_FALSE(s.done());
    CHECK(s.next_log2() == expected[i]);
    s.record(outcomes[i]);
  }
  CHECK(s.done());
  CHECK(s.best_log2() == 3.75);
  CHECK_FALSE(s.capped());
}

TEST_CASE("a search that meets at the top of its widest range is capped: a lower bound", "[plan]") {
  RateSearch s(
      RateSearchOptions{.lo_log2 = -5, .hi_log2 = 3, .probes = 2, .max_widenings = 1, .widen_log2 = 3});
  // -5, -1, then the top 3, then [3, 6) bisected once (4.5): all met, no widening left.
  const double expected[] = {-5, -1, 3, 4.5};
  for (const double e : expected) {
    REQUIRE_FALSE(s.done());
    CHECK(s.next_log2() == e);
    s.record(true);
  }
  CHECK(s.done());
  CHECK(s.capped());
  CHECK(s.best_log2() == 4.5);
  RateSearch fixed(RateSearchOptions{.lo_log2 = -5, .hi_log2 = 3, .probes = 2, .max_widenings = 0});
  fixed.record(true);
  fixed.record(true);
  CHECK(fixed.done());  // a fixed range (--rate-range) never probes past its top
  CHECK(fixed.capped());
}

TEST_CASE("time scales are the inverse rate multipliers, printed to 6 digits", "[plan]") {
  CHECK(time_scale_text(-5) == "32");
  CHECK(time_scale_text(0) == "1");
  CHECK(time_scale_text(1) == "0.5");
  CHECK(time_scale_text(0.25) == "0.840896");
}

}  // namespace
}  // namespace tokenline
