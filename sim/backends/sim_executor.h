// SimExecutor: an Executor of the simulation (the analytic, simgrid and replay backends) that also says
// what its last step cost, term by term, for the step span in trace.json. execute() returns the step's
// duration without sleeping it; the instance loop's clock (sim/simgrid/sim_clock.h) passes it.
#pragma once

#include "cost/step_cost.h"
#include "engine/core/executor.h"

namespace tokenline {

class SimExecutor : public Executor {
 public:
  // The last executed step's breakdown; null for a replay (a measurement has none).
  virtual const StepCost* last_breakdown() const = 0;
};

}  // namespace tokenline
