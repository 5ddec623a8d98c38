// The host-tier part of a simulated step: what the step's load-backs and write-backs (engine/core/kv_tier.h,
// carried on each rank's Batch) add to its duration. The analytic backend prices them in closed form; the
// simgrid backend runs the loads as flows (simgrid_backend.cpp) and uses the same overlap rule on the time
// the flows took.
#pragma once

#include "cost/cost_model.h"
#include "cost/tier_transfer.h"
#include "engine/core/executor.h"

namespace tokenline {

HostLinkSpec host_link_of(const CostModel& cm);
// The slowest rank's tier time over a forward of compute_s (ranks run in lockstep; each has its own link).
TierTime price_step_tier(const CostModel& cm, const StepBatches& step, double compute_s);
// Adds t to outcome (duration_s grows by its stall).
void add_tier_time(const TierTime& t, StepOutcome& outcome);

}  // namespace tokenline
