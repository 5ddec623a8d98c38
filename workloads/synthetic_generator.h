// SyntheticGenerator: requests drawn from a SyntheticSpec on named pcg64 streams ("arrivals",
// "input_tokens", "output_tokens", "prefix_group", "think_time"), so the same spec and seed give the same
// requests on every platform. Streams: state is one pending turn per live session.
//
// Without sessions: request i arrives at the sum of i inter-arrival gaps (the first at 0); its prompt is
// prefix_tokens of a uniformly chosen shared prefix group (if any) followed by `input` fresh tokens.
// With sessions: sessions start at the arrival process's times; turn k+1 arrives think_s (exponential
// mean) after turn k's arrival (open loop: the generator cannot know when the answer ends) and its
// prompt is turn k's prompt + turn k's output + `input` new tokens, so every full block of the
// conversation so far keeps its hash. Full blocks inside the shared prefix carry the group's hashes; a
// trailing partial block is unique to its request.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <string>
#include <vector>

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
  struct Turn {
    double arrival_s = 0;
    int64_t sequence = 0;  // tie-break: earlier-created turn first
    int64_t session = 0;
    int64_t turn = 0;            // 0-based
    int64_t context_tokens = 0;  // previous prompt + previous output (0 for the first turn)
    int64_t group = -1;
  };
  struct Later {
    bool operator()(const Turn& a, const Turn& b) const {
      return a.arrival_s != b.arrival_s ? a.arrival_s > b.arrival_s : a.sequence > b.sequence;
    }
  };

  double next_gap_s();
  int64_t draw_group();
  WorkloadRequest make_request(const Turn& t, int64_t input_tokens, int64_t output_tokens);
  WorkloadRequest emit(const Turn& t);

  SyntheticSpec spec_;
  Rng arrivals_, input_, output_, groups_, think_;
  int64_t total_ = 0;
  int64_t emitted_ = 0;
  int64_t started_sessions_ = 0;
  int64_t sequence_ = 0;
  double next_start_s_ = 0;                                      // arrival of the next new request / session
  std::priority_queue<Turn, std::vector<Turn>, Later> pending_;  // later turns of live sessions
};

}  // namespace tokenline
