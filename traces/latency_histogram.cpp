#include "traces/latency_histogram.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace tokenline {

void LatencyHistogram::add(double value) {
  assert(std::isfinite(value) && "a latency sample must be finite");
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = count_ == 0 ? value : std::max(max_, value);
  ++count_;
  sum_ += value;
  if (value <= 0) {
    ++zeros_;
    return;
  }
  int octave = 0;
  const double mantissa = std::frexp(value, &octave);  // value = mantissa * 2^octave, mantissa in [0.5, 1)
  // 2 * mantissa - 1 is in [0, 1) and exact (Sterbenz), so the sub-bucket depends only on the value's bits.
  const auto sub = static_cast<int64_t>((2.0 * mantissa - 1.0) * kSubBuckets);
  if (counts_.empty()) {
    first_octave_ = octave;
    counts_.assign(kSubBuckets, 0);
  } else if (octave < first_octave_) {
    counts_.insert(counts_.begin(), static_cast<size_t>(first_octave_ - octave) * kSubBuckets, 0);
    first_octave_ = octave;
  }
  const auto index = static_cast<size_t>(octave - first_octave_) * kSubBuckets + static_cast<size_t>(sub);
  if (index >= counts_.size()) counts_.resize((index / kSubBuckets + 1) * kSubBuckets, 0);
  ++counts_[index];
}

double LatencyHistogram::bucket_midpoint(int64_t index) const {
  const int octave = first_octave_ + static_cast<int>(index / kSubBuckets);
  const double sub = static_cast<double>(index % kSubBuckets);
  return std::ldexp(1.0 + (sub + 0.5) / kSubBuckets, octave - 1);
}

double LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0.0;
  const int64_t rank = nearest_rank(p, count_);
  if (rank == count_) return max_;  // the extreme samples are known exactly
  if (rank == 1) return min_;
  if (rank <= zeros_) return min_;
  int64_t seen = zeros_;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(bucket_midpoint(static_cast<int64_t>(i)), min_, max_);
  }
  return max_;  // unreachable: the buckets hold count_ - zeros_ samples
}

LatencySummary LatencyHistogram::summary() const {
  return LatencySummary{.count = count_,
                        .mean = mean(),
                        .p50 = percentile(50),
                        .p90 = percentile(90),
                        .p99 = percentile(99),
                        .max = max_};
}

}  // namespace tokenline
