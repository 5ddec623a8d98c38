// WorkloadSource: a stream of WorkloadRequests in non-decreasing arrival order. Implementations hold at
// most a bounded amount of state (one input line, one pending turn per live session), never the whole
// trace. Open inheritance: trace readers and generators plug in here. Owned by one caller; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "workloads/workload_request.h"

namespace tokenline {

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // The next request, or nullopt at the end. Throws InputError for bad input (unless skipping bad lines).
  virtual std::optional<WorkloadRequest> next() = 0;
  // Lines skipped as malformed so far (readers in skip-bad-lines mode); 0 for generators.
  virtual int64_t skipped_lines() const { return 0; }
  // The error message of the first skipped line ("" if none), so a run can say why lines were dropped.
  virtual std::string first_skip_reason() const { return ""; }
  // What the source reads, for run metadata: "mooncake:conv.jsonl", "synthetic:n=100,...".
  virtual std::string describe() const = 0;
};

}  // namespace tokenline
