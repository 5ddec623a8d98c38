// ReplayBackend: the `replay:<trace.json>` backend of `tokenline sim`. An Executor that returns, step by
// step in order, the durations and op spans a real run (`tokenline run`) recorded for one instance, so
// the simulator advances virtual time exactly as the real engine's clock did. Given the same workload and
// scheduler options, the core then makes the same decisions; the backend checks each planned step against
// the recorded one and counts divergences, never throwing: the step index, then per rank the batch entry by
// entry (request, prefill or decode, new tokens, prefill context) where the trace recorded it (op detail),
// else the rank's token and request counts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cost/step_cost.h"
#include "sim/backends/sim_executor.h"
#include "traces/trace_reader.h"

namespace tokenline {

class ReplayBackend final : public SimExecutor {
 public:
  explicit ReplayBackend(RecordedInstance recorded);

  // The next recorded step (zero duration once the recording is exhausted, counted as a divergence).
  StepOutcome execute(const StepBatches& step) override;
  const StepCost* last_breakdown() const override { return nullptr; }  // a measurement has no breakdown
  int64_t divergences() const { return divergences_; }  // steps that differed from their recording
  // "step S rank R entry I: recorded X, planned Y (...)" for the first; empty when none.
  const std::string& first_divergence() const { return first_divergence_; }
  // (step, rank) pairs whose recorded batch composition differed from the planned batch.
  int64_t composition_divergences() const { return composition_divergences_; }
  int64_t compared_entries() const { return compared_entries_; }  // recorded entries checked one by one
  int64_t replayed_steps() const { return static_cast<int64_t>(next_); }
  int64_t recorded_steps() const { return static_cast<int64_t>(recorded_.steps.size()); }

 private:
  void diverge(const std::string& why);
  void check_step(const StepBatches& step, const RecordedStep& rec);
  // Why a rank's planned batch (nullptr: idle) differs from its recording (nullptr: idle); "" when not.
  std::string rank_mismatch(const Batch* planned, const RecordedRankStep* recorded);
  static std::vector<std::vector<int32_t>> accepted_drafts(const StepBatches& step, const RecordedStep& rec);

  RecordedInstance recorded_;
  std::vector<std::string> names_;  // op names, stable storage for OpSpan::name
  size_t next_ = 0;
  int64_t divergences_ = 0;
  int64_t composition_divergences_ = 0;
  int64_t compared_entries_ = 0;
  std::string first_divergence_;
};

// `replay:<path>` -> path; empty when the backend is not a replay.
std::string replay_trace_path(const std::string& backend);

}  // namespace tokenline
