// PlanSetup: everything one plan's rows depend on (the target, the candidate space, the rate search, the
// workload's profile). Shards of one plan carry equal setups; merge refuses partials whose setups differ.
#pragma once

#include <cstdint>
#include <string>

#include "plan/candidate_space.h"
#include "plan/plan_row.h"
#include "plan/rate_search.h"
#include "plan/sim_invocation.h"
#include "plan/workload_profile.h"
#include "traces/metrics.h"

namespace tokenline {

// The engine whose launch lines realise the best row: vLLM's when the profile's engine is vLLM, else
// SGLang's (SGLang's profile, and the seed's engine, which is SGLang's).
enum class LaunchEngine { kSglang, kVllm, kTrtllm };
std::string launch_engine_name(LaunchEngine e);  // "sglang", "vllm", "trtllm": plan.json's spelling

struct PlanSetup {
  PlanTarget target;
  Slo slo;
  std::string hardware_name;  // the GPUs' hardware (the cluster's when --cluster)
  SpaceOptions space;
  RateSearchOptions search;
  WorkloadProfile workload;
  int32_t candidates = 0;  // all candidates, over every shard
  LaunchEngine launch_engine = LaunchEngine::kSglang;
  RankBy rank = RankBy::kThroughput;  // plan --rank; a reporting choice, not written into partials
};

}  // namespace tokenline
