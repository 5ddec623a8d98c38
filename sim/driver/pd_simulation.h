// run_pd_simulation: a `tokenline sim --pd xPyD` run. Actors: the arrival feeder (sim/driver/feeder.h; routes
// each request to a prefill instance), one per prefill instance and one per decode instance running the
// core's Instance loop, and one KV sender per prefill rank (its NICs or NVLink port). A request leaves its
// prefill instance after its last chunk; the core's PdHandoff reserves its pages on a decode rank (FIFO; the
// prefill instance pauses while its waiting hand-offs would fill its pool); the sender moves its KV + indexer
// cache in the link's time; the decode instance admits it with its KV present. Requests are data, never
// actors. With --backend simgrid, instances take consecutive GPUs of the cluster (prefill ones first), each
// steps on its own SimgridBackend, and each KV hand-off is network flows from the prefill rank's tp GPUs to
// the decode rank's GPUs (so it shares NICs with all-to-all traffic; metered in links.json); --pd-link is
// then unused. There, --pd-transfer layer queues a request for hand-off when its last chunk's step starts
// and, once granted, sends each layer's share as that step reaches the layer (the step's price / layers
// apart; the last layer not before the step ends). KV of earlier chunks goes with the last step's layers, so
// this matches the analytic bound (which streams from the first chunk) only while the link carries the whole
// prompt's KV within the last step; a request granted after its step ended sends everything at the grant.
#pragma once

#include <span>

#include "cost/step_cost.h"
#include "engine/core/arrival_source.h"
#include "sim/driver/pd_config.h"
#include "sim/driver/sim_config.h"
#include "sim/driver/simulation.h"

namespace tokenline {

// REQUIRES: config.instances holds pd.prefill_instances prefill-only instances, then pd.decode_instances
// decode-only ones, all decode instances with the same ranks and pages per rank; cost_models[i] is
// instance i's. Writes the same outputs as run_simulation (requests.csv rows carry the decode instance
// and the transfer) and throws as it does.
SimResult run_pd_simulation(const SimConfig& config, const PdConfig& pd,
                            std::span<const CostModel> cost_models, ArrivalSource& source);

}  // namespace tokenline
