#include "traces/latency_summary.h"

#include <algorithm>
#include <cmath>

namespace tokenline {

int64_t nearest_rank(double p, int64_t n) {
  // Multiply in integers where possible so that p90 of 10 values is rank 9 exactly, not 9.000000001 -> 10.
  const auto scaled = static_cast<int64_t>(std::llround(p * 1000.0));  // p in thousandths of a percent
  const int64_t rank = (scaled * n + 100000 - 1) / 100000;
  return std::clamp<int64_t>(rank, 1, n);
}

LatencySummary summarize(std::vector<double>& values) {
  LatencySummary s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  // Select ranks in increasing order so each nth_element only reorders the tail left by the previous one.
  auto begin = values.begin();
  auto select = [&](double p) {
    auto nth = values.begin() + (nearest_rank(p, s.count) - 1);
    std::nth_element(begin, nth, values.end());
    begin = nth;
    return *nth;
  };
  s.p50 = select(50);
  s.p90 = select(90);
  s.p99 = select(99);
  s.max = *std::max_element(begin, values.end());
  return s;
}

}  // namespace tokenline
