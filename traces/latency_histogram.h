// LatencyHistogram: a latency distribution in memory bounded by its range, not its sample count
// (HdrHistogram-style log-linear buckets). Count, mean, min and max are exact; a percentile is the
// midpoint of the bucket holding the exact nearest-rank sample (latency_summary.h), clamped to
// [min, max], so it lies within kRelativeError of the exact value for positive samples. A sample <= 0
// counts in a zero bucket (reported as min). Deterministic: a value's bucket depends only on its bits
// (frexp), and the mean sums samples in the order added, as summarize() does. Single-threaded.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/latency_summary.h"

namespace tokenline {

class LatencyHistogram {
 public:
  static constexpr int kSubBuckets = 128;  // per power of two: a bucket spans 1/128 of its octave's base
  // A value v in bucket [lo, lo + w) with w <= lo / 128 is at most w / 2 <= v / 256 from the midpoint.
  static constexpr double kRelativeError = 1.0 / (2.0 * kSubBuckets);  // 0.39%

  void add(double value);  // REQUIRES: value is finite

  int64_t count() const { return count_; }
  double mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return min_; }
  double max() const { return max_; }
  // The p-th percentile (0 < p <= 100), nearest rank; 0 when empty.
  double percentile(double p) const;
  // count, mean, p50, p90, p99, max in summarize()'s shape.
  LatencySummary summary() const;
  // Buckets held (memory is 8 bytes each): kSubBuckets per octave between the smallest and largest sample.
  int64_t buckets() const { return static_cast<int64_t>(counts_.size()); }

 private:
  double bucket_midpoint(int64_t index) const;

  std::vector<int64_t> counts_;  // index (octave - first_octave_) * kSubBuckets + sub-bucket
  int first_octave_ = 0;         // frexp exponent of counts_[0]'s octave
  int64_t zeros_ = 0;            // samples <= 0
  int64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace tokenline
