// SyntheticGenerator: requests drawn from a SyntheticSpec on named pcg64 streams ("arrivals",
// "input_tokens", "output_tokens", "prefix_group"), so the same spec and seed give the same requests on
// every platform. Streams: no state beyond the next arrival.
//
// Request i arrives at the sum of i inter-arrival gaps (the first at 0); its prompt is prefix_tokens of a
// uniformly chosen shared prefix group (if any) followed by `input` fresh tokens. Full blocks inside the
// shared prefix carry the group's hashes; the others are unique to their request. Multi-turn sessions,
// whose next turn waits for the last answer, are SessionGenerator's (workloads/session_generator.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/rng.h"
#include "workloads/synthetic_spec.h"
#include "workloads/workload_source.h"

namespace tokenline {

class SyntheticGenerator final : public WorkloadSource {
 public:
  // default_seed is used when the spec has no seed=.
  SyntheticGenerator(SyntheticSpec spec, uint64_t default_seed);

  std::optional<WorkloadRequest> next() override;
  std::string describe() const override { return "synthetic:" + spec_.text; }

 private:
  double next_gap_s();
  int64_t draw_group();
  WorkloadRequest make_request(double arrival_s, int64_t group, int64_t input_tokens, int64_t output_tokens);

  SyntheticSpec spec_;
  Rng arrivals_, input_, output_, groups_;
  int64_t total_ = 0;
  int64_t emitted_ = 0;
  double next_arrival_s_ = 0;
};

}  // namespace tokenline
