// run_simulation: one `tokenline sim` run on SimGrid's engine (docs/architecture.md "Simulation driver").
// Actors: an arrival feeder (sim/driver/feeder.h: streams the ArrivalSource, open loop at trace times or
// closed loop with N in flight) that routes each request to an instance (Router), and one actor per instance
// running the core's Instance loop: plan -> AnalyticBackend::execute -> sleep the step -> commit at the new
// time -> record. Requests are data, never actors. One simulation per process (SimGrid's engine is a
// singleton).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "cost/step_cost.h"
#include "engine/core/arrival_source.h"
#include "sim/driver/sim_config.h"

namespace tokenline {

struct SimResult {
  int64_t arrived = 0;
  int64_t completed = 0;
  int64_t rejected = 0;
  int64_t in_flight = 0;  // still queued or running at the end (0 unless an instance got stuck)
  int64_t preemptions = 0;
  int64_t skipped_lines = 0;
  int64_t events = 0;
  double simulated_s = 0;
  double wall_s = 0;  // wall-clock seconds of the whole run (stderr only unless asked for)
  double prefix_hit_rate = 0;
  double profile_coverage = 0;  // share of predicted step time priced from a measured op profile
  double bounded_share = 0;     // of it, collectives at a smaller group's rows (a lower bound)
};

// Runs the simulation and writes metrics.json, requests.csv and trace.json into config.output.dir.
// Throws InputError for bad input met while streaming (a malformed line without --skip-bad-lines) and
// std::runtime_error when an output file cannot be completed or an actor failed; in both cases no
// output file is left behind.
// REQUIRES: cost_models[i] is instance i's cost model (cost_models.size() == config.instances.size() > 0).
SimResult run_simulation(const SimConfig& config, std::span<const CostModel> cost_models,
                         ArrivalSource& source);

struct RecordedRun;  // traces/trace_reader.h
// run_simulation with every instance's steps replayed from `recorded` (instance i from recorded
// instance i): fails (std::runtime_error) when the replay diverged from the recording.
// REQUIRES: recorded.instances.size() == config.instances.size().
SimResult run_replay_simulation(const SimConfig& config, std::span<const CostModel> cost_models,
                                ArrivalSource& source, const RecordedRun& recorded);

class FleetLog;
class LinkMeter;
class Recorder;
// What a driver hands finish_simulation() once its actors are done.
struct RunEnd {
  std::string backend_name;  // the run block's backend
  int64_t skipped_lines = 0;
  std::chrono::steady_clock::time_point wall_start;  // SimResult::wall_s is measured from here
  LinkMeter* links = nullptr;  // --backend simgrid: its counters join trace.json and go to links.json
  FleetLog* fleet = nullptr;   // autoscaled: closed at the end, its block and GPU-hours in metrics.json
  // An autoscaled PD run: `fleet` is the prefill pool's log and this the decode pool's; the block then
  // holds one object per pool and the totals.
  FleetLog* decode_fleet = nullptr;
};
// Shared by every driver: the run's summary from the recorder at the current virtual time, then
// metrics.json written (with the "cost" block under config.cost, the "autoscaling" block with a fleet) and
// every output published. Throws std::runtime_error when an output cannot be
// completed (nothing is left half-written).
SimResult finish_simulation(const SimConfig& config, Recorder& recorder, const RunEnd& end);

}  // namespace tokenline
