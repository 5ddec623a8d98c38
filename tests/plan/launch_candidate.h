// A candidate for the launch-line tests (sglang_launch_test, vllm_launch_test): 8192-token chunks, 32
// running requests per rank.
#pragma once

#include <string>

#include "plan/candidate_space.h"

namespace tokenline::testing {

inline Candidate launch_candidate(bool pd, const std::string& prefill, const std::string& layout,
                                  int32_t instances) {
  Candidate c;
  c.pd = pd;
  if (pd) c.prefill = parse_parallel(prefill, "test");
  c.prefill_instances = pd ? 1 : 0;
  c.layout = parse_parallel(layout, "test");
  c.instances = instances;
  c.chunk_tokens = 8192;
  c.max_running = 32;
  return c;
}

}  // namespace tokenline::testing
