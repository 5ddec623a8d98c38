#include "sim/analytic_backend.h"

#include <array>
#include <string>

namespace tokenline {
namespace {

// OpSpan names must have static storage: op_name() views copied once into null-terminated strings.
const std::array<std::string, kOpCount>& op_names() {
  static const std::array<std::string, kOpCount> names = [] {
    std::array<std::string, kOpCount> n;
    for (int i = 0; i < kOpCount; ++i) n[static_cast<size_t>(i)] = std::string(op_name(static_cast<Op>(i)));
    return n;
  }();
  return names;
}

SeqWork to_seq_work(const BatchEntry& e) {
  return SeqWork{.new_tokens = e.new_tokens,
                 .context_tokens = e.context_tokens,
                 .prefill = e.phase == Phase::kPrefill,
                 .last_chunk = e.last_chunk};
}

}  // namespace

AnalyticBackend::AnalyticBackend(const CostModel& cost_model, bool op_detail)
    : cost_model_(cost_model), op_detail_(op_detail) {
  op_names();  // build the name table before the first step
}

AnalyticBackend::AnalyticBackend(const CostModel& cost_model, bool op_detail, const StepNoise& noise,
                                 uint64_t seed, int32_t instance)
    : AnalyticBackend(cost_model, op_detail) {
  if (noise.expert_skew || noise.mtp)
    noise_ = std::make_unique<StepNoiseSampler>(noise, cost_model, seed, instance);
}

StepOutcome AnalyticBackend::execute(const StepBatches& step) {
  const size_t ranks = step.ranks.size();
  if (work_.size() < ranks) work_.resize(ranks);
  rank_spans_.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    std::vector<SeqWork>& w = work_[r];
    w.clear();
    for (const BatchEntry& e : step.ranks[r].entries) w.push_back(to_seq_work(e));
    rank_spans_[r] = std::span<const SeqWork>(w);
  }
  const double imbalance = noise_ ? noise_->expert_imbalance(step) : 1.0;
  last_cost_ = step_cost(cost_model_, std::span<const std::span<const SeqWork>>(rank_spans_), imbalance);
  StepOutcome outcome;
  if (noise_) noise_->accept_drafts(step, outcome.accepted_drafts);
  outcome.duration_s = last_cost_.total_s;
  if (op_detail_) append_op_spans(outcome);
  return outcome;
}

void AnalyticBackend::append_op_spans(StepOutcome& outcome) const {
  // Ops run back to back on the busiest GPU (every MoE layer synchronizes the ranks), collectives on
  // the comm stream; each op's span is its whole-step total over the layers it runs on.
  const auto& names = op_names();
  double t = 0;
  for (int i = 0; i < kOpCount; ++i) {
    const Op op = static_cast<Op>(i);
    const Term& term = last_cost_[op];
    if (term.time_s <= 0) continue;
    outcome.ops.push_back(OpSpan{.name = names[static_cast<size_t>(i)].c_str(),
                                 .stream = is_collective(op) ? Stream::kComm : Stream::kCompute,
                                 .rank = last_cost_.busiest_rank,
                                 .start_s = t,
                                 .duration_s = term.time_s});
    t += term.time_s;
  }
}

}  // namespace tokenline
