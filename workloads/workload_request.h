// WorkloadRequest: one request as a workload describes it, before the simulator turns it into the core's
// Request. Plain data; produced in arrival order by a WorkloadSource.
#pragma once

#include <cstdint>
#include <vector>

namespace tokenline {

struct WorkloadRequest {
  int64_t id = 0;             // 0, 1, 2, ... in the order the source produced them
  double arrival_s = 0;       // since the start of the workload; non-decreasing along a source
  int64_t input_tokens = 0;   // prompt length, >= 1
  int64_t output_tokens = 0;  // tokens to generate, >= 1
  std::vector<int64_t>
      block_hashes;          // one per block_tokens-sized prompt block (last may be partial); may be empty
  int32_t block_tokens = 0;  // tokens per hashed block; 0 when block_hashes is empty
  int32_t priority = 0;      // larger = more urgent; 0 by default
  int64_t session = -1;      // conversation id for multi-turn workloads; -1 = none
};

}  // namespace tokenline
