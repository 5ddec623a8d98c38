#include "plan/rate_search.h"

#include <cmath>
#include <cstdio>

namespace tokenline {

RateSearch::RateSearch(const RateSearchOptions& options)
    : options_(options), lo_(options.lo_log2), hi_(options.hi_log2), budget_(options.probes) {}

bool RateSearch::done() const {
  return missed_first_ || (probes_run_ >= budget_ && !probing_top_);
}

double RateSearch::next_log2() const {
  if (probes_run_ == 0) return options_.lo_log2;
  return probing_top_ ? hi_ : 0.5 * (lo_ + hi_);
}

void RateSearch::record(bool meets_slo) {
  const double probed = next_log2();
  ++probes_run_;
  if (probes_run_ == 1) {
    found_ = meets_slo;
    missed_first_ = !meets_slo;
  } else if (probing_top_) {
    probing_top_ = false;
    if (meets_slo) {  // the limit lies above the range: widen it and bisect again
      lo_ = hi_;
      hi_ += options_.widen_log2;
      ++widenings_;
      budget_ = probes_run_ + options_.probes - 1;
    } else {
      missed_ = true;
    }
  } else {
    (meets_slo ? lo_ : hi_) = probed;
    missed_ = missed_ || !meets_slo;
  }
  plan_next();
}

void RateSearch::plan_next() {
  // The bisection's probes are spent and every one met: probe the top before calling it a limit.
  if (!missed_first_ && !missed_ && probes_run_ >= budget_ && widenings_ < options_.max_widenings)
    probing_top_ = true;
}

std::string time_scale_text(double rate_log2) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", std::exp2(-rate_log2));
  return text;
}

}  // namespace tokenline
