#include "plan/rate_search.h"

#include <cmath>
#include <cstdio>

namespace tokenline {

RateSearch::RateSearch(const RateSearchOptions& options)
    : options_(options), lo_(options.lo_log2), hi_(options.hi_log2) {}

bool RateSearch::done() const {
  return missed_first_ || probes_run_ >= options_.probes;
}

double RateSearch::next_log2() const {
  return probes_run_ == 0 ? options_.lo_log2 : 0.5 * (lo_ + hi_);
}

void RateSearch::record(bool meets_slo) {
  const double probed = next_log2();
  ++probes_run_;
  if (probes_run_ == 1) {
    found_ = meets_slo;
    missed_first_ = !meets_slo;
    return;
  }
  (meets_slo ? lo_ : hi_) = probed;
}

std::string time_scale_text(double rate_log2) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", std::exp2(-rate_log2));
  return text;
}

}  // namespace tokenline
