#include "cost/step_pricer.h"

namespace tokenline {

StepCost StepPricer::price(const CostModel& cost_model, const StepBatches& step, double expert_imbalance) {
  const size_t ranks = step.ranks.size();
  if (work_.size() < ranks) work_.resize(ranks);
  rank_spans_.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    std::vector<SeqWork>& w = work_[r];
    w.clear();
    for (const BatchEntry& e : step.ranks[r].entries)
      w.push_back(SeqWork{.new_tokens = e.new_tokens,
                          .context_tokens = e.context_tokens,
                          .prefill = e.phase == Phase::kPrefill,
                          .last_chunk = e.last_chunk});
    rank_spans_[r] = std::span<const SeqWork>(w);
  }
  return step_cost(cost_model, std::span<const std::span<const SeqWork>>(rank_spans_), expert_imbalance);
}

}  // namespace tokenline
