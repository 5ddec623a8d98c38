// AnalyticBackend: the `analytic` cost backend. An Executor that predicts each step's duration in closed
// form from the token ledger (engine/model/ledger.h step_cost: roofline per op, collectives, launch
// overheads, the hardware's efficiency factors), over the heterogeneous per-rank batches the scheduler
// planned. Owns reusable scratch so a step allocates nothing at step detail. Never throws.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "cost/step_cost.h"
#include "cost/step_noise.h"
#include "cost/step_pricer.h"
#include "sim/backends/sim_executor.h"

namespace tokenline {

class AnalyticBackend final : public SimExecutor {
 public:
  // REQUIRES: cost_model outlives the backend. op_detail: fill StepOutcome::ops with one span per op.
  AnalyticBackend(const CostModel& cost_model, bool op_detail);
  // The same with seeded per-step noise (MoE load imbalance, MTP acceptance) on instance's own streams.
  AnalyticBackend(const CostModel& cost_model, bool op_detail, const StepNoise& noise, uint64_t seed,
                  int32_t instance);

  StepOutcome execute(const StepBatches& step) override;
  // The breakdown of the last executed step (weights, KV, indexer, comm, launch shares).
  const StepCost& last_cost() const { return last_cost_; }
  const StepCost* last_breakdown() const override { return &last_cost_; }

 private:
  void append_op_spans(StepOutcome& outcome) const;

  const CostModel& cost_model_;
  bool op_detail_;
  StepPricer pricer_;
  StepCost last_cost_;
  std::unique_ptr<StepNoiseSampler> noise_;  // null: even expert routing, no drafts accepted
};

}  // namespace tokenline
