#include "sim/backends/tier_step.h"

namespace tokenline {

HostLinkSpec host_link_of(const CostModel& cm) {
  return HostLinkSpec{.bw_per_direction = cm.hardware.host_link_bw,
                      .latency_s = cm.hardware.host_link_latency_s};
}

TierTime price_step_tier(const CostModel& cm, const StepBatches& step, double compute_s) {
  TierTime worst;
  for (const Batch& b : step.ranks) {
    if (b.host_load_bytes == 0 && b.host_store_bytes == 0) continue;
    const TierTime t = price_tier(host_link_of(cm), static_cast<double>(b.host_load_bytes),
                                  static_cast<double>(b.host_store_bytes), compute_s, cm.model.layers,
                                  cm.options.tier_load_overlap);
    if (t.stall_s > worst.stall_s || (t.stall_s == worst.stall_s && t.load_s > worst.load_s)) worst = t;
  }
  return worst;
}

void add_tier_time(const TierTime& t, StepOutcome& outcome) {
  outcome.tier_load_s = t.load_s;
  outcome.tier_store_s = t.store_s;
  outcome.tier_stall_s = t.stall_s;
  outcome.duration_s += t.stall_s;
}

}  // namespace tokenline
