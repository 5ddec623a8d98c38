// TimeSource: what prices each op of a step (docs/architecture.md "Where a step's time comes from").
// step_cost computes every op's work and its roofline time, then hands each busy rank's terms to the cost
// model's TimeSource, which overlays the times it measures and adds what the step costs beyond its ops.
// Two implementations: the roofline (roofline_time_source(): the seed's analytic model, nothing overlaid)
// and a measured op profile resolved for one model and layout (ProfileCurves, op_profile_pricing.h). The
// next hardware, engine, layer kind or weight format is priced by adding to one of them, not to step_cost.
// CONTRACT: const and shareable across threads; no allocation per step (but an own profile under DP: one
// time per rank, for each group's peers' load).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "cost/term.h"
#include "engine/model/ledger.h"

namespace tokenline {

struct CostModel;  // cost_model.h
struct RankWork;   // rank_work.h: one attention rank's work in a step, summed over its sequences

using Terms = std::array<Term, kOpCount>;

// What one step's pricing carries from rank to rank and into the experts and the step's end.
struct StepPricing {
  double moe_tokens = 0;       // tokens through the fused MoE over all ranks (CUDA-graph padding included)
  bool graph = false;          // every busy rank replays a CUDA graph (the measured launch path)
  std::vector<double> rank_s;  // own profiles under DP: each rank's time, for its peers' load
};

class TimeSource {
 public:
  virtual ~TimeSource() = default;
  // True when the times are measured (op spans and ledger rows then name each term's source).
  virtual bool measured() const = 0;
  // Before the ranks of a step are priced.
  virtual void begin_step(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                          StepPricing& step) const = 0;
  // Overlays this source's times on busy rank r's terms (flops, bytes, compute_s, memory_s stay).
  // step.moe_tokens already counts w's tokens.
  virtual void price_rank(const CostModel& cm, const RankWork& w, size_t r, StepPricing& step,
                          Terms& terms) const = 0;
  // Overlays the routed experts' time over all ranks (ex: the roofline over all tokens; busiest_rank_ex: the
  // busiest rank's expert term as price_rank left it).
  virtual void price_experts(const CostModel& cm, double expert_imbalance, const StepPricing& step,
                             const Term& busiest_rank_ex, Term& ex) const = 0;
  // What the step costs beyond its ops (a per-layer floor, the host launching a context step, CPU time not
  // hidden), added to sc.total_s.
  // draft_layers: MTP draft layer passes the busiest rank runs after its decode.
  virtual void finish_step(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                           int64_t draft_layers, StepCost& sc) const = 0;
};

// The seed's analytic model: every op at max(compute, memory) + launches; nothing overlaid or added.
std::shared_ptr<const TimeSource> roofline_time_source();

}  // namespace tokenline
