// The contract every WorkloadSource keeps, checked on each request a harness draws: dense ids from 0,
// non-decreasing finite arrivals within limits::kMaxArrivalS, token counts in [1, kMaxRequestTokens],
// block hashes covering the prompt when present. A broken contract aborts (a fuzz finding).
#pragma once

#include <cmath>
#include <cstdlib>

#include "common/input_limits.h"
#include "workloads/workload_source.h"

namespace tokenline::fuzz {

// Draws at most `max_requests` requests and checks each.
inline void check_requests(WorkloadSource& source, int64_t max_requests = 100'000) {
  int64_t expected_id = 0;
  double last_arrival_s = 0;
  for (int64_t i = 0; i < max_requests; ++i) {
    const std::optional<WorkloadRequest> r = source.next();
    if (!r) return;
    const bool ok = r->id == expected_id++ && std::isfinite(r->arrival_s) && r->arrival_s >= last_arrival_s &&
                    r->arrival_s <= limits::kMaxArrivalS && r->input_tokens >= 1 &&
                    r->input_tokens <= limits::kMaxRequestTokens && r->output_tokens >= 1 &&
                    r->output_tokens <= limits::kMaxRequestTokens &&
                    (r->block_hashes.empty() ||
                     (r->block_tokens > 0 && static_cast<int64_t>(r->block_hashes.size()) ==
                                                 (r->input_tokens + r->block_tokens - 1) / r->block_tokens));
    if (!ok) std::abort();
    last_arrival_s = r->arrival_s;
  }
}

}  // namespace tokenline::fuzz
