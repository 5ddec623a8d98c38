#include "traces/latency_summary.h"

#include <catch2/catch.hpp>

namespace tokenline {
namespace {

TEST_CASE("nearest rank follows ceil(p/100*n)", "[latency_summary]") {
  CHECK(nearest_rank(50, 10) == 5);
  CHECK(nearest_rank(90, 10) == 9);
  CHECK(nearest_rank(99, 10) == 10);
  CHECK(nearest_rank(50, 1) == 1);
  CHECK(nearest_rank(99, 1000) == 990);
}

TEST_CASE("summarize matches the sorted sample", "[latency_summary]") {
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);  // 1..100, reversed
  const LatencySummary s = summarize(values);
  CHECK(s.count == 100);
  CHECK(s.mean == Approx(50.5));
  CHECK(s.p50 == 50);
  CHECK(s.p90 == 90);
  CHECK(s.p99 == 99);
  CHECK(s.max == 100);
}

TEST_CASE("summarize of an empty sample is zero", "[latency_summary]") {
  std::vector<double> none;
  const LatencySummary s = summarize(none);
  CHECK(s.count == 0);
  CHECK(s.max == 0);
}

}  // namespace
}  // namespace tokenline
