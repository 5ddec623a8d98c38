#include "traces/latency_histogram.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "common/rng.h"

namespace tokenline {
namespace {

constexpr double kPercentiles[] = {1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100};

// The exact nearest-rank percentile of a sorted sample.
double exact(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<size_t>(nearest_rank(p, static_cast<int64_t>(sorted.size())) - 1)];
}

// Every percentile of the histogram within the stated relative error of the exact one.
void check_against_exact(std::vector<double> values) {
  LatencyHistogram h;
  for (double v : values) h.add(v);
  std::vector<double> copy = values;
  const LatencySummary s = summarize(copy);
  CHECK(h.count() == s.count);
  CHECK(h.mean() == s.mean);  // the same sum in the same order: bit for bit
  CHECK(h.max() == s.max);
  std::sort(values.begin(), values.end());
  CHECK(h.min() == values.front());
  for (double p : kPercentiles) {
    const double want = exact(values, p);
    INFO("p" << p << " exact " << want << " histogram " << h.percentile(p));
    CHECK(std::abs(h.percentile(p) - want) <= LatencyHistogram::kRelativeError * want);
  }
}

TEST_CASE("histogram percentiles are within 0.39% of the exact ones", "[latency_histogram]") {
  STATIC_REQUIRE(LatencyHistogram::kRelativeError <= 0.005);
  for (uint64_t seed : {1, 2, 3}) {
    INFO("seed " << seed);
    Rng rng(seed, "latency_histogram_test");
    std::vector<double> lognormal, uniform, spread;
    for (int i = 0; i < 20000; ++i) {
      lognormal.push_back(rng.lognormal(std::log(0.03), 1.0));          // ITL-like: ~30 ms
      uniform.push_back(0.010 + 0.002 * rng.uniform01());               // one narrow octave
      spread.push_back(std::pow(10.0, -6.0 + 10.0 * rng.uniform01()));  // 1 us to 10^4 s
    }
    check_against_exact(lognormal);
    check_against_exact(uniform);
    check_against_exact(spread);
  }
}

TEST_CASE("small samples: extremes exact, ranks as nearest-rank", "[latency_histogram]") {
  LatencyHistogram h;
  for (int i = 100; i >= 1; --i) h.add(i);
  CHECK(h.percentile(1) == 1);
  CHECK(h.percentile(100) == 100);
  CHECK(h.percentile(50) == Approx(50).epsilon(LatencyHistogram::kRelativeError));
  CHECK(h.percentile(90) == Approx(90).epsilon(LatencyHistogram::kRelativeError));
  CHECK(h.percentile(99) == Approx(99).epsilon(LatencyHistogram::kRelativeError));
  CHECK(h.mean() == Approx(50.5));
}

TEST_CASE("zero samples count and report as the minimum", "[latency_histogram]") {
  LatencyHistogram h;
  for (int i = 0; i < 3; ++i) h.add(0.0);
  h.add(2.0);
  CHECK(h.count() == 4);
  CHECK(h.percentile(50) == 0.0);
  CHECK(h.percentile(75) == 0.0);
  CHECK(h.percentile(100) == 2.0);
  CHECK(h.mean() == Approx(0.5));
}

TEST_CASE("an empty histogram reports zeros", "[latency_histogram]") {
  const LatencyHistogram h;
  const LatencySummary s = h.summary();
  CHECK(s.count == 0);
  CHECK(s.mean == 0);
  CHECK(s.p99 == 0);
  CHECK(s.max == 0);
}

TEST_CASE("memory follows the range, not the count", "[latency_histogram]") {
  LatencyHistogram h;
  Rng rng(7, "latency_histogram_memory");
  for (int i = 0; i < 1000000; ++i) h.add(0.001 + 0.999 * rng.uniform01());  // 1 ms .. 1 s: 10-11 octaves
  CHECK(h.count() == 1000000);
  CHECK(h.buckets() <= 11 * LatencyHistogram::kSubBuckets);
  h.add(1e-9);  // a far smaller sample grows the table downwards only by its octaves
  CHECK(h.buckets() <= 31 * LatencyHistogram::kSubBuckets);
  CHECK(h.min() == 1e-9);
}

TEST_CASE("percentiles do not depend on the order samples arrive in", "[latency_histogram]") {
  std::vector<double> values;
  Rng rng(11, "latency_histogram_order");
  for (int i = 0; i < 5000; ++i) values.push_back(rng.exponential(0.05));
  LatencyHistogram forward, backward;
  for (double v : values) forward.add(v);
  for (auto it = values.rbegin(); it != values.rend(); ++it) backward.add(*it);
  for (double p : kPercentiles) CHECK(forward.percentile(p) == backward.percentile(p));
}

}  // namespace
}  // namespace tokenline
