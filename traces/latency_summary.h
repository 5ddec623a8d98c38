// LatencySummary: mean, p50, p90, p99 and max of a sample. Percentiles use the nearest-rank method: the
// p-th percentile of n sorted values is the value at 1-based rank ceil(p/100 * n). An empty sample gives
// all zeros and count 0.
#pragma once

#include <cstdint>
#include <vector>

namespace tokenline {

struct LatencySummary {
  int64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

// Reorders `values` (partial selection, O(n)); the mean is summed in the order given before reordering.
LatencySummary summarize(std::vector<double>& values);

// 1-based nearest rank of percentile `p` (0 < p <= 100) among `n` values.
int64_t nearest_rank(double p, int64_t n);

}  // namespace tokenline
