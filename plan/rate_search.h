// RateSearch: the bounded, deterministic search for the highest request rate a candidate serves within the
// SLO. Rates are the workload's own arrival rate times 2^e, e in [lo_log2, hi_log2). The first probe is
// the lowest rate (a candidate that misses there is done); then bisection between the highest rate that met
// and the lowest that missed (hi_log2 counts as missed). At most `probes` probes in all.
#pragma once

#include <cstdint>
#include <string>

namespace tokenline {

struct RateSearchOptions {
  double lo_log2 = -5.0;  // 1/32 of the workload's rate
  double hi_log2 = 3.0;   // 8x the workload's rate (never reached)
  int32_t probes = 6;     // resolution after the first: (hi - lo) / 2^(probes - 1) in log2
};

class RateSearch {
 public:
  explicit RateSearch(const RateSearchOptions& options);
  bool done() const;
  double next_log2() const;     // REQUIRES: !done()
  void record(bool meets_slo);  // the outcome of the probe at next_log2()
  int32_t probes_run() const { return probes_run_; }
  bool found() const { return found_; }
  double best_log2() const { return lo_; }  // the highest rate that met; REQUIRES: found()

 private:
  RateSearchOptions options_;
  double lo_ = 0;  // met (after the first probe)
  double hi_ = 0;  // missed
  int32_t probes_run_ = 0;
  bool found_ = false;
  bool missed_first_ = false;
};

// `tokenline sim --time-scale` for rate multiplier 2^e: 2^-e printed with 6 significant digits; the
// printed text is what the probe runs and what the report shows.
std::string time_scale_text(double rate_log2);

}  // namespace tokenline
