#include "sim/step_backend.h"

#include <string>

#include "common/input_error.h"
#include "sim/simgrid_adapter.h"

namespace tokenline {

void StepBackend::use_simgrid(const SimConfig& config, const CostModel& cm, const sg::PlatformSpec& platform,
                              LinkMeter* meter, int& first_gpu, int32_t index) {
  if (first_gpu + cm.parallel.gpus() > platform.gpu_count()) {
    throw InputError(
        "--cluster " + config.cluster_source,
        "at least " + std::to_string(first_gpu + cm.parallel.gpus()) + " GPUs for --backend simgrid",
        std::to_string(platform.gpu_count()) + " GPUs");
  }
  simgrid_ = std::make_unique<SimgridBackend>(cm, platform, first_gpu,
                                              config.output.trace_detail == TraceDetail::kOp, config.overlap,
                                              config.noise, config.seed, index);
  simgrid_->set_meter(meter);
  first_gpu += cm.parallel.gpus();
}

StepOutcome StepBackend::execute(const StepBatches& step) {
  if (!replay_ && simgrid_) return simgrid_->execute(step);  // advances the clock by the step
  StepOutcome outcome = replay_ ? replay_->execute(step) : analytic_.execute(step);
  sg::sleep_for(outcome.duration_s);
  return outcome;
}

const StepCost* StepBackend::last_cost() const {
  if (replay_) return nullptr;
  return simgrid_ ? &simgrid_->last_cost() : &analytic_.last_cost();
}

bool begin_step(Instance& instance, StepPlan& plan, Recorder& recorder, int32_t index, double now_s) {
  instance.plan(plan);
  for (size_t r = 0; r < plan.ranks.size(); ++r) {
    const Scheduler& rank = instance.rank(static_cast<int32_t>(r));
    for (int32_t victim : plan.ranks[r].preemptions)
      recorder.on_preemption(index, rank.request(victim).record.id, now_s);
  }
  if (!plan.empty()) return true;
  instance.commit(plan, StepOutcome{}, now_s);  // applies any preemptions
  return false;
}

}  // namespace tokenline
