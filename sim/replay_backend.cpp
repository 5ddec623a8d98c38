#include "sim/replay_backend.h"

#include <algorithm>

namespace tokenline {

ReplayBackend::ReplayBackend(RecordedInstance recorded) : recorded_(std::move(recorded)) {
  // One stored copy per distinct name; OpSpan keeps a pointer into it for the backend's lifetime.
  for (const RecordedStep& s : recorded_.steps) {
    for (const RecordedOp& op : s.ops) {
      if (std::find(names_.begin(), names_.end(), op.name) == names_.end()) names_.push_back(op.name);
    }
  }
}

void ReplayBackend::diverge(const std::string& why) {
  if (divergences_++ == 0) first_divergence_ = why;
}

StepOutcome ReplayBackend::execute(const StepBatches& step) {
  StepOutcome outcome;
  if (next_ >= recorded_.steps.size()) {
    diverge("step " + std::to_string(step.step_index) + ": the recording has only " +
            std::to_string(recorded_.steps.size()) + " steps");
    return outcome;
  }
  const RecordedStep& rec = recorded_.steps[next_++];
  std::vector<RecordedRankStep> planned;
  for (const Batch& b : step.ranks) {
    if (!b.empty()) planned.push_back({b.rank, b.total_tokens(), static_cast<int64_t>(b.entries.size())});
  }
  std::vector<RecordedRankStep> recorded;  // idle ranks' aligned spans (op detail) carry no work
  for (const RecordedRankStep& r : rec.ranks) {
    if (r.requests > 0) recorded.push_back(r);
  }
  const bool same =
      rec.step == step.step_index && planned.size() == recorded.size() &&
      std::equal(planned.begin(), planned.end(), recorded.begin(), [](const auto& a, const auto& b) {
        return a.rank == b.rank && a.tokens == b.tokens && a.requests == b.requests;
      });
  if (!same) {
    diverge("step " + std::to_string(step.step_index) + ": planned " +
            std::to_string(planned.empty() ? 0 : planned.front().tokens) + " tokens, recorded step " +
            std::to_string(rec.step) + " with " +
            std::to_string(recorded.empty() ? 0 : recorded.front().tokens));
  }
  outcome.duration_s = rec.duration_s;
  for (const RecordedOp& op : rec.ops) {
    const auto it = std::find(names_.begin(), names_.end(), op.name);
    outcome.ops.push_back(OpSpan{.name = it->c_str(),
                                 .stream = op.comm ? Stream::kComm : Stream::kCompute,
                                 .rank = op.rank,
                                 .start_s = op.start_s,
                                 .duration_s = op.duration_s});
  }
  return outcome;
}

std::string replay_trace_path(const std::string& backend) {
  const std::string prefix = "replay:";
  return backend.rfind(prefix, 0) == 0 ? backend.substr(prefix.size()) : std::string();
}

}  // namespace tokenline
