// ProbeResult: what the plan reads back from one `tokenline sim` probe's metrics.json, and the SLO check
// the plan applies: p90 TTFT and p90 TPOT within the SLO, every request completed (none rejected, none
// left in flight).
#pragma once

#include <cstdint>
#include <string>

#include "traces/metrics.h"

namespace tokenline {

struct ProbeResult {
  int32_t exit_code = -1;  // of the `tokenline sim` child; metrics are read only when 0
  int64_t completed = 0;
  int64_t rejected = 0;
  int64_t in_flight = 0;
  double ttft_p50_ms = 0, ttft_p90_ms = 0, ttft_p99_ms = 0;
  double tpot_mean_ms = 0, tpot_p50_ms = 0, tpot_p90_ms = 0, tpot_p99_ms = 0;
  double output_tokens_per_s = 0;
  double requests_per_s = 0;
  double goodput_requests_per_s = 0;  // metrics.json's goodput (every request within both SLO bounds)
};

// Parses metrics.json text; throws std::runtime_error when a field is missing.
ProbeResult parse_probe_metrics(const std::string& metrics_json, int32_t exit_code);

bool meets_slo(const ProbeResult& p, const Slo& slo);
// How far the probe is from the SLO: max over the bounds of p90 / bound (<= 1 meets them); 1e9 for a
// failed run, and at least 2 when requests were rejected or left in flight.
double slo_ratio(const ProbeResult& p, const Slo& slo);

}  // namespace tokenline
