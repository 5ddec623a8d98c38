// ArrivalSource: a stream of requests with their trace times, read one at a time (never loaded whole).
// The driver's feeder pulls from it; workload readers are wrapped into it (workload_source.h).
#pragma once

#include <cstdint>

#include "engine/core/request.h"

namespace tokenline {

// The one timed-request type: a core request with its arrival time, what an ArrivalSource yields, the
// simulation's feeder sends and the real engine's RequestFeed hands its loop (the workload readers'
// WorkloadRequest is the file's record, before it becomes a RequestSpec).
struct TimedRequest {
  double arrival_s = 0;  // in the workload after its window (--start, --time-scale), or when a client sent it
  RequestSpec spec;
};

class ArrivalSource {
 public:
  virtual ~ArrivalSource() = default;
  // Fills `out` with the next request and returns true, or returns false at the end. May throw
  // InputError for a malformed line (only before the simulation starts: see prevalidate in the CLI).
  virtual bool next(TimedRequest& out) = 0;
  // Malformed lines skipped so far (--skip-bad-lines).
  virtual int64_t skipped_lines() const { return 0; }
};

}  // namespace tokenline
