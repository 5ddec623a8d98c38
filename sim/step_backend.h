// StepBackend: what an instance actor's steps run on, in virtual time - the analytic cost model (its
// duration slept), activities on the SimGrid platform (--backend simgrid: they advance the clock
// themselves) or a real run's recorded step times (--backend replay). Shared by the co-located and the PD
// drivers, with begin_step, the half of a step both take before executing it.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/core/instance.h"
#include "sim/analytic_backend.h"
#include "sim/link_meter.h"
#include "sim/recorder.h"
#include "sim/replay_backend.h"
#include "sim/sim_config.h"
#include "sim/simgrid_backend.h"

namespace tokenline {

class StepBackend {
 public:
  StepBackend(const CostModel& cm, bool op_detail, const StepNoise& noise, uint64_t seed, int32_t index)
      : analytic_(cm, op_detail, noise, seed, index) {}

  // --backend simgrid: the instance takes the platform's GPUs from first_gpu on (advanced past them).
  // Throws InputError naming the cluster when too few remain.
  void use_simgrid(const SimConfig& config, const CostModel& cm, const sg::PlatformSpec& platform,
                   LinkMeter* meter, int& first_gpu, int32_t index);
  void use_replay(std::unique_ptr<ReplayBackend> replay) { replay_ = std::move(replay); }
  SimgridBackend* simgrid() const { return simgrid_.get(); }  // null unless --backend simgrid
  const ReplayBackend* replay() const { return replay_.get(); }

  // Executes the step and returns once virtual time has passed its duration.
  StepOutcome execute(const StepBatches& step);
  // The last step's breakdown; null for a replay (a measurement has none).
  const StepCost* last_cost() const;

 private:
  AnalyticBackend analytic_;
  std::unique_ptr<SimgridBackend> simgrid_;
  std::unique_ptr<ReplayBackend> replay_;
};

// Plans the instance's next step at now_s and records its preemptions; an empty plan is committed at once
// (applying those preemptions) and false returned: nothing can run until something arrives.
bool begin_step(Instance& instance, StepPlan& plan, Recorder& recorder, int32_t index, double now_s);

}  // namespace tokenline
