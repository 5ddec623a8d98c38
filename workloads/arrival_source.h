// ArrivalSource: a stream of requests with their trace times, read one at a time (never loaded whole).
// The driver's feeder pulls from it; workload readers are wrapped into it (workload_source.h).
#pragma once

#include <cstdint>

#include "engine/core/request.h"

namespace tokenline {

struct Arrival {
  double trace_time_s = 0;  // arrival time in the workload after its window (--start, --time-scale)
  RequestSpec spec;
};

class ArrivalSource {
 public:
  virtual ~ArrivalSource() = default;
  // Fills `out` with the next request and returns true, or returns false at the end. May throw
  // InputError for a malformed line (only before the simulation starts: see prevalidate in the CLI).
  virtual bool next(Arrival& out) = 0;
  // Malformed lines skipped so far (--skip-bad-lines).
  virtual int64_t skipped_lines() const { return 0; }
};

}  // namespace tokenline
