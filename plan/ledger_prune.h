// The ledger's verdict on a candidate before any simulation: weights must fit each GPU, each rank must hold
// the KV of the workload's longest request, and static latency floors (no queueing, no batching, the
// prefix cache at its best) must not already miss the SLO. Floors bound the percentiles the plan checks
// (p90): at least 10% of the requests need that long.
#pragma once

#include <memory>
#include <string>

#include "engine/model/model_config.h"
#include "plan/candidate_space.h"
#include "plan/workload_profile.h"
#include "topologies/hardware.h"
#include "traces/metrics.h"

namespace tokenline {

struct OpProfile;

// What every candidate of a plan is priced on: the model on these GPUs, and the op profile whose tables
// and engine (KV placement, memory rule, admission) `tokenline sim --profile` prices the probes with. A
// null profile: the roofline and the seed's engine, as `tokenline sim` without --profile.
struct PlanPricing {
  ModelConfig model;
  Hardware hardware;
  std::shared_ptr<const OpProfile> profile;
};

enum class PruneReason { kNone, kWeights, kKv, kTtftFloor, kTpotFloor };
std::string prune_reason_name(PruneReason r);  // "", "weights", "kv", "ttft-floor", "tpot-floor"

struct LedgerVerdict {
  PruneReason reason = PruneReason::kNone;
  double ttft_floor_s = 0;  // a p90-request's prompt computed alone in chunks (0 when weights do not fit)
  double tpot_floor_s = 0;  // a p90-request's decode step alone at its prompt's context
  std::string detail;       // one phrase with the numbers behind the reason
};

LedgerVerdict ledger_verdict(const Candidate& c, const PlanPricing& pricing, const WorkloadProfile& workload,
                             const Slo& slo);

}  // namespace tokenline
