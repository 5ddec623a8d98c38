// RunFrame: what every simulation driver (sim/driver/simulation.cpp, pd_simulation.cpp) holds beside its
// instances, and the two ends of its run. It owns the Recorder of the outputs, the client Feeder that hands
// each request to the driver's dispatch, with --backend simgrid the platform and its LinkMeter, and the
// wall-clock start; engine() makes the SimGrid engine with the feeder's actor, run() runs it and reports the
// run once every actor is done.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "run/recorder.h"
#include "sim/driver/feeder.h"
#include "sim/driver/simulation.h"
#include "sim/simgrid/link_meter.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "sim/simgrid/simgrid_platform.h"

namespace tokenline {

class RunFrame {
 public:
  // `hbm_bw` sizes the platform's HBM links (the first instance's cost model's). REQUIRES: config and source
  // outlive the frame.
  RunFrame(const SimConfig& config, ArrivalSource& source, double hbm_bw, Feeder::Dispatch dispatch);

  Recorder& recorder() { return recorder_; }
  Feeder& feeder() { return feeder_; }
  // --backend simgrid: the platform instances take their GPUs from, and the meter of its links; else null.
  const sg::PlatformSpec* platform() const { return platform_ ? &*platform_ : nullptr; }
  LinkMeter* link_meter() const { return link_meter_.get(); }

  // The engine (on the platform where there is one) with the feeder's actor, which calls `fed` once the
  // source has ended (instances with nothing left to do may then end). The driver adds its own actors.
  std::unique_ptr<sg::SimEngine> engine(std::function<void()> fed);
  // Runs `engine` (from engine(), with the driver's actors added) until every actor has returned; then the
  // source's input error or the engine's failure as an exception, else finish_simulation()'s result.
  // fleet: an autoscaled run's log (RunEnd::fleet); decode_fleet: an autoscaled PD run's decode pool's.
  SimResult run(sg::SimEngine& engine, const std::string& backend_name, FleetLog* fleet = nullptr,
                FleetLog* decode_fleet = nullptr);

 private:
  const SimConfig& config_;
  ArrivalSource& source_;
  Recorder recorder_;
  std::optional<sg::PlatformSpec> platform_;
  std::unique_ptr<LinkMeter> link_meter_;
  Feeder feeder_;
  std::chrono::steady_clock::time_point wall_start_;
};

}  // namespace tokenline
