// WorkloadProfile: what the ledger prune needs to know about a workload, read in one streaming pass:
// its size, its arrival rate, the 90th-percentile prompt and uncacheable prompt lengths, the longest
// request. Uncacheable = the prompt minus the longest prefix whose block hashes an earlier request
// already sent (an upper bound on any prefix-cache hit, whatever the cache size).
#pragma once

#include <cstdint>

#include "engine/core/arrival_source.h"

namespace tokenline {

struct WorkloadProfile {
  int64_t requests = 0;
  double span_s = 0;                // last arrival - first arrival
  double rate_per_s = 0;            // requests / span_s (0 when all arrive at once)
  int64_t p90_prompt_tokens = 0;    // at least 10% of the prompts are this long or longer
  int64_t p90_uncached_tokens = 0;  // at least 10% of the requests compute this many prompt tokens
  int64_t max_prompt_tokens = 0;
  int64_t max_request_tokens = 0;  // prompt + output, the most KV one request holds
};

// Reads the whole source. Throws InputError when it holds no request.
WorkloadProfile profile_workload(ArrivalSource& source);

}  // namespace tokenline
