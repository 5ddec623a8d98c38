// StepPricer: turns a step's per-rank batches into the ledger's per-rank SeqWork and prices them with
// step_cost. Shared by every ledger-driven backend (analytic, simgrid); reuses its buffers, so a step
// allocates nothing once the largest batch has been seen. Single-threaded.
#pragma once

#include <span>
#include <vector>

#include "cost/step_cost.h"
#include "engine/core/executor.h"

namespace tokenline {

class StepPricer {
 public:
  StepCost price(const CostModel& cost_model, const StepBatches& step, double expert_imbalance);

 private:
  std::vector<std::vector<SeqWork>> work_;            // per rank
  std::vector<std::span<const SeqWork>> rank_spans_;  // per rank, views of work_
};

}  // namespace tokenline
