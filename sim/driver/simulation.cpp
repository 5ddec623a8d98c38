#include "sim/driver/simulation.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common/input_error.h"
#include "engine/core/instance_loop.h"
#include "engine/core/router.h"
#include "run/recorder.h"
#include "sim/backends/replay_backend.h"
#include "sim/backends/simgrid_backend.h"
#include "sim/driver/executor_factory.h"
#include "sim/driver/run_frame.h"
#include "sim/simgrid/link_meter.h"
#include "sim/simgrid/sim_clock.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "sim/simgrid/simgrid_platform.h"

namespace tokenline {
namespace {

class Driver;

// One instance and what its actor runs the instance loop with: its executor, its clock, and itself as the
// loop's observer (forwarding to the driver).
struct InstanceSlot final : StepObserver {
  InstanceSlot(Driver& owner, int32_t slot_index, const InstanceConfig& config,
               std::unique_ptr<SimExecutor> exec, std::function<bool()> finished)
      : driver(owner),
        index(slot_index),
        instance(config),
        executor(std::move(exec)),
        clock(std::move(finished)) {}
  void on_preemption(RequestId id, double now_s, bool retraction) override;
  void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters) override;
  void on_records(std::span<const RequestRecord> records) override;

  Driver& driver;
  int32_t index;
  Instance instance;
  std::unique_ptr<SimExecutor> executor;
  const ReplayBackend* replay = nullptr;  // --backend replay: the executor
  SimClock clock;
};

class Driver {
 public:
  Driver(const SimConfig& config, std::span<const CostModel> cost_models, ArrivalSource& source)
      : config_(config),
        frame_(config, source, cost_models[0].hbm_bw,
               [this](RequestSpec&& spec, double sent_s) { dispatch(std::move(spec), sent_s); }),
        router_(config.router, config.instances.front().config.kv.page_tokens, config.router_weights) {
    int first_gpu = 0;
    for (int32_t i = 0; i < config.instance_count(); ++i) {
      const SimConfig::InstanceSpec& spec = config.instances[static_cast<size_t>(i)];
      slots_.push_back(
          std::make_unique<InstanceSlot>(*this, i, spec.config,
                                         make_executor(config, cost_models[static_cast<size_t>(i)], i,
                                                       frame_.platform(), frame_.link_meter(), first_gpu),
                                         [this] { return frame_.feeder().done(); }));
      instance_views_.push_back(&slots_.back()->instance);
      frame_.recorder().describe_instance(i, spec.parallel_name, spec.config.dp_ranks,
                                          spec.config.kv.total_pages);
    }
  }

  SimResult run();
  // --backend replay: instance i replays recorded instance i.
  void attach_replay(const RecordedRun& recorded) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      auto replay = std::make_unique<ReplayBackend>(recorded.instances[i]);
      slots_[i]->replay = replay.get();
      slots_[i]->executor = std::move(replay);
    }
  }
  const ReplayBackend& replay(size_t i) const { return *slots_[i]->replay; }

  void on_step(const InstanceSlot& slot, const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters);
  void on_records(int32_t index, std::span<const RequestRecord> records);
  Recorder& recorder() { return frame_.recorder(); }

 private:
  void dispatch(RequestSpec&& spec, double sent_s);
  void wake_instances();

  const SimConfig& config_;
  RunFrame frame_;
  Router router_;
  std::vector<std::unique_ptr<InstanceSlot>> slots_;
  std::vector<const Instance*> instance_views_;
};

void InstanceSlot::on_preemption(RequestId id, double now_s, bool retraction) {
  driver.recorder().on_preemption(index, id, now_s, retraction);
}

void InstanceSlot::on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
                           const InstanceCounters& counters) {
  driver.on_step(*this, plan, outcome, start_s, counters);
}

void InstanceSlot::on_records(std::span<const RequestRecord> records) {
  driver.on_records(index, records);
}

// The request reaches the engine now; its record's arrival is the client's send time.
void Driver::dispatch(RequestSpec&& spec, double sent_s) {
  const int32_t index = router_.pick(instance_views_, spec);
  InstanceSlot& slot = *slots_[static_cast<size_t>(index)];
  frame_.recorder().on_arrival(index, spec.id, sent_s);
  slot.instance.add_request(std::move(spec), sent_s);
  slot.clock.wake();
}

void Driver::wake_instances() {
  for (auto& slot : slots_) slot->clock.wake();
}

void Driver::on_records(int32_t index, std::span<const RequestRecord> records) {
  for (const RequestRecord& r : records) frame_.recorder().on_record(r, index);
  frame_.feeder().on_finished(records);
  frame_.feeder().wake();
}

void Driver::on_step(const InstanceSlot& slot, const StepPlan& plan, const StepOutcome& outcome,
                     double start_s, const InstanceCounters& counters) {
  frame_.recorder().on_step(slot.index, plan, outcome, slot.executor->last_breakdown(), start_s, counters);
}

SimResult Driver::run() {
  std::unique_ptr<sg::SimEngine> engine = frame_.engine([this] { wake_instances(); });
  for (auto& slot : slots_) {
    InstanceSlot* s = slot.get();
    engine->add_actor("instance-" + std::to_string(s->index),
                      [s] { run_instance_loop(s->instance, *s->executor, s->clock, *s); });
  }
  return frame_.run(*engine, slots_.front()->replay ? "replay" : std::string(to_string(config_.backend)));
}

}  // namespace

SimResult finish_simulation(const SimConfig& config, Recorder& recorder, const RunEnd& end) {
  // trace.json process of the link counters, above every instance's pid (instance + 1).
  constexpr int kLinksTracePid = 1000000;
  SimResult result;
  result.simulated_s = sg::now_s();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - end.wall_start).count();
  if (end.links != nullptr) end.links->emit(recorder.trace(), kLinksTracePid);
  Metrics& m = recorder.metrics();
  result.arrived = m.arrived();
  result.completed = m.completed();
  result.rejected = m.rejected();
  result.in_flight = result.arrived - result.completed - result.rejected;
  result.preemptions = m.preemptions();
  result.prefix_hit_rate = m.input_tokens() > 0 ? static_cast<double>(m.prefix_hit_tokens()) /
                                                      static_cast<double>(m.input_tokens())
                                                : 0.0;
  result.profile_coverage = m.profile_coverage();
  result.skipped_lines = end.skipped_lines;
  result.events = recorder.events();
  RunInfo info;
  info.backend = end.backend_name;
  info.model = config.model_name;
  info.hardware = config.hardware_name;
  info.cluster = config.cluster_name;
  info.parallelism = config.parallel_name;
  info.router = std::string(to_string(config.router));
  info.workload = config.workload_name;
  info.instances = config.instance_count();
  info.seed = config.seed;
  info.simulated_s = result.simulated_s;
  info.skipped_lines = result.skipped_lines;
  if (config.output.wall_time_in_metrics) info.wall_s = result.wall_s;
  std::string why;
  if (!recorder.finish(info, &why)) throw std::runtime_error(why);
  if (end.links != nullptr && !end.links->write(config.output.dir + "/links.json", &why))
    throw std::runtime_error(why);
  return result;
}

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::kAnalytic:
      return "analytic";
    case Backend::kSimgrid:
      return "simgrid";
  }
  return "";
}

SimResult run_simulation(const SimConfig& config, std::span<const CostModel> cost_models,
                         ArrivalSource& source) {
  Driver driver(config, cost_models, source);
  return driver.run();
}

SimResult run_replay_simulation(const SimConfig& config, std::span<const CostModel> cost_models,
                                ArrivalSource& source, const RecordedRun& recorded) {
  Driver driver(config, cost_models, source);
  driver.attach_replay(recorded);
  const SimResult result = driver.run();
  for (size_t i = 0; i < recorded.instances.size(); ++i) {
    const ReplayBackend& replay = driver.replay(i);
    if (replay.divergences() > 0)
      throw std::runtime_error("instance " + std::to_string(i) + " diverged from the recorded run (" +
                               std::to_string(replay.divergences()) +
                               " steps; first: " + replay.first_divergence() + ")");
    if (replay.replayed_steps() != replay.recorded_steps())
      throw std::runtime_error("instance " + std::to_string(i) + " replayed " +
                               std::to_string(replay.replayed_steps()) + " of " +
                               std::to_string(replay.recorded_steps()) + " recorded steps");
  }
  return result;
}

}  // namespace tokenline
