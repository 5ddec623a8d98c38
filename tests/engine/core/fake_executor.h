// FakeExecutor: a deterministic executor for scheduler tests. A step lasts step_s plus per_token_s per
// computed token; MTP accepts `accept` drafts of every decode entry (capped by the drafts verified). It
// records every step's batches so tests can assert the timeline.
#pragma once

#include <algorithm>
#include <vector>

#include "engine/core/executor.h"
#include "engine/core/instance.h"

namespace tokenline::test {

class FakeExecutor : public Executor {
 public:
  double step_s = 1.0;
  double per_token_s = 0.0;
  int32_t accept = 0;
  std::vector<StepBatches> history;

  StepOutcome execute(const StepBatches& step) override {
    history.push_back(step);
    StepOutcome out;
    int64_t tokens = 0;
    out.accepted_drafts.resize(step.ranks.size());
    for (size_t r = 0; r < step.ranks.size(); ++r) {
      for (const BatchEntry& e : step.ranks[r].entries) {
        tokens += e.new_tokens;
        out.accepted_drafts[r].push_back(e.phase == Phase::kDecode ? std::min(accept, e.draft_tokens) : 0);
      }
    }
    out.duration_s = step_s + per_token_s * static_cast<double>(tokens);
    return out;
  }
};

// One step by hand for scheduler tests (drivers run engine/core/instance_loop): plan, execute when the
// plan is not empty, commit at now_s + the step's duration. Returns the duration (0 for an empty plan).
inline double step(Instance& instance, Executor& executor, double now_s) {
  StepPlan plan;
  instance.plan(plan);
  StepOutcome outcome;
  if (!plan.empty()) outcome = executor.execute(plan.batches);
  instance.commit(plan, outcome, now_s + outcome.duration_s);
  return outcome.duration_s;
}

}  // namespace tokenline::test
