// The edge of `tokenline sim --pd xPyD` and of the per-step noise options: parses the options into native
// structs (InputError naming the option, what was expected and what was found) and refuses, before
// simulating, a PD layout whose decode pool cannot hold even one request of the workload.
#pragma once

#include <cstdint>
#include <string>

#include "cost/op_profile.h"
#include "cost/step_noise.h"
#include "engine/core/arrival_source.h"
#include "sim/driver/pd_config.h"
#include "sim/driver/sim_config.h"

namespace tokenline {

// "" -> disabled (0P0D); "1P1D", "2P1D", ... -> counts. link: nvlink | ib200 | ib400; mode: whole | layer.
PdConfig parse_pd(const std::string& spec, const std::string& link, const std::string& mode);
// Roles on config.instances: the first prefill_instances prefill only, the rest decode only.
// REQUIRES: config.instances.size() == prefill + decode. Throws InputError when the decode instances
// differ in ranks or pages per rank.
void apply_pd_roles(SimConfig& config, const PdConfig& pd);
// The profile's disaggregated-path terms (nullptr: none): pd_first_token_latency_s on top of the
// first-token latency every request gets, pd_handoff_per_token_s on the senders. Only PD runs call it, so an
// aggregated run's outputs do not depend on them.
void apply_pd_path_costs(SimConfig& config, PdConfig& pd, const OpProfile* profile);
// Reads the workload once: throws InputError (--pd) when no request of it fits an empty decode rank.
void check_pd_capacity(const SimConfig& config, const PdConfig& pd, ArrivalSource& workload);

struct StepNoiseOptions {
  std::string expert_skew = "uniform";  // uniform | zipf:<alpha> | histogram:<file>
  int32_t eplb_redundant = -1;          // -1: no EPLB; >= 0: EPLB with that many redundant experts
  int32_t mtp_drafts = 0;               // MTP draft tokens per decode step (0: off)
  double mtp_accept_mean = 0.7;
  double mtp_accept_std = 0.0;
};
// Validated StepNoise for a model with `experts` routed experts (0: dense).
StepNoise parse_step_noise(const StepNoiseOptions& o, int32_t experts);

}  // namespace tokenline
