#include "sim/backends/analytic_backend.h"

#include "sim/backends/tier_step.h"

namespace tokenline {
AnalyticBackend::AnalyticBackend(const CostModel& cost_model, bool op_detail)
    : cost_model_(cost_model), op_detail_(op_detail) {}

AnalyticBackend::AnalyticBackend(const CostModel& cost_model, bool op_detail, const StepNoise& noise,
                                 uint64_t seed, int32_t instance)
    : AnalyticBackend(cost_model, op_detail) {
  if (noise.expert_skew || noise.mtp)
    noise_ = std::make_unique<StepNoiseSampler>(noise, cost_model, seed, instance);
}

StepOutcome AnalyticBackend::execute(const StepBatches& step) {
  const double imbalance = noise_ ? noise_->expert_imbalance(step) : 1.0;
  last_cost_ = pricer_.price(cost_model_, step, imbalance);
  StepOutcome outcome;
  if (noise_) noise_->accept_drafts(step, outcome.accepted_drafts);
  outcome.duration_s = last_cost_.total_s;
  add_tier_time(price_step_tier(cost_model_, step, last_cost_.total_s), outcome);
  if (op_detail_) append_op_spans(outcome);
  return outcome;
}

void AnalyticBackend::append_op_spans(StepOutcome& outcome) const {
  // Ops run back to back on the busiest GPU (every MoE layer synchronizes the ranks), collectives on
  // the comm stream; each op's span is its whole-step total over the layers it runs on.
  double t = 0;
  for (int i = 0; i < kOpCount; ++i) {
    const Op op = static_cast<Op>(i);
    const Term& term = last_cost_[op];
    if (term.time_s <= 0) continue;
    outcome.ops.push_back(OpSpan{.name = op_name(op).data(),
                                 .stream = is_collective(op) ? Stream::kComm : Stream::kCompute,
                                 .rank = last_cost_.busiest_rank,
                                 .start_s = t,
                                 .duration_s = term.time_s,
                                 .source = span_source(cost_model_, term)});
    t += term.time_s;
  }
}

}  // namespace tokenline
