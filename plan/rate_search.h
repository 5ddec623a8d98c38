// RateSearch: the bounded, deterministic search for the highest request rate a candidate serves within the
// SLO. Rates are the workload's own arrival rate times 2^e. The first probe is the lowest rate, lo_log2 (a
// candidate that misses there is done); then bisection between the highest rate that met and the lowest
// that missed (hi_log2 counts as missed), `probes` probes in all. A candidate that met at every probe has
// not shown its limit: the search then probes hi_log2 itself and, when that meets too, widens the range by
// widen_log2 above it and bisects again (probes - 1 more), at most max_widenings times. A search whose every
// probe met, the last at the top of its widest range, is capped(): its rate is a lower bound (">=").
#pragma once

#include <cstdint>
#include <string>

namespace tokenline {

struct RateSearchOptions {
  double lo_log2 = -5.0;      // 1/32 of the workload's rate
  double hi_log2 = 3.0;       // 8x the workload's rate, probed only when every rate below met
  int32_t probes = 6;         // resolution after the first: (hi - lo) / 2^(probes - 1) in log2
  int32_t max_widenings = 3;  // each: probe the top, and if it met, a range widen_log2 higher
  double widen_log2 = 3.0;    // 8x per widening: 8^4 = 4096x the workload's rate at most
};

class RateSearch {
 public:
  explicit RateSearch(const RateSearchOptions& options);
  bool done() const;
  double next_log2() const;     // REQUIRES: !done()
  void record(bool meets_slo);  // the outcome of the probe at next_log2()
  int32_t probes_run() const { return probes_run_; }
  int32_t probe_budget() const { return budget_ + (probing_top_ ? 1 : 0); }  // probes so far + planned
  bool found() const { return found_; }
  double best_log2() const { return lo_; }  // the highest rate that met; REQUIRES: found()
  // Every probe met, the top of the widest range included: best_log2() is a lower bound. REQUIRES: done()
  bool capped() const { return found_ && !missed_; }

 private:
  void plan_next();

  RateSearchOptions options_;
  double lo_ = 0;  // met (after the first probe)
  double hi_ = 0;  // missed, or the top of the range (not probed)
  int32_t probes_run_ = 0;
  int32_t budget_ = 0;  // probes of the bisection, widened ones included
  int32_t widenings_ = 0;
  bool probing_top_ = false;  // the next probe is hi_ itself
  bool found_ = false;
  bool missed_ = false;  // a probe after the first missed: the limit lies below hi_
  bool missed_first_ = false;
};

// `tokenline sim --time-scale` for rate multiplier 2^e: 2^-e printed with 6 significant digits; the
// printed text is what the probe runs and what the report shows.
std::string time_scale_text(double rate_log2);

}  // namespace tokenline
