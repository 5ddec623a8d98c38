#include "sim/driver/simulation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/input_error.h"
#include "engine/core/instance_loop.h"
#include "engine/core/router.h"
#include "run/recorder.h"
#include "sim/backends/replay_backend.h"
#include "sim/backends/simgrid_backend.h"
#include "sim/driver/autoscaler.h"
#include "sim/driver/autoscaler_fleet.h"
#include "sim/driver/executor_factory.h"
#include "sim/driver/run_frame.h"
#include "sim/simgrid/link_meter.h"
#include "sim/simgrid/sim_clock.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "sim/simgrid/simgrid_platform.h"
#include "traces/cost_block.h"
#include "traces/request_row.h"

namespace tokenline {
namespace {

// trace.json: an autoscaled instance's lifecycle spans (cold start, draining) on a thread of its own, above
// every rank's compute and comm threads; the fleet's instance counts on a process of their own, beside the
// link counters' (finish_simulation).
constexpr int kLifecycleTid = 100000;
constexpr int kFleetTracePid = 1000001;

class Driver;

// One instance and what its actor runs the instance loop with: its executor, its clock, and itself as the
// loop's observer (forwarding to the driver).
struct InstanceSlot final : StepObserver {
  InstanceSlot(Driver& owner, int32_t slot_index, const InstanceConfig& config,
               std::unique_ptr<SimExecutor> exec, std::function<bool()> finished)
      : driver(owner),
        index(slot_index),
        instance(std::make_unique<Instance>(config)),
        executor(std::move(exec)),
        clock(std::move(finished)) {}
  void on_preemption(RequestId id, double now_s, bool retraction) override;
  void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters) override;
  void on_records(std::span<const RequestRecord> records) override;

  Driver& driver;
  int32_t index;
  std::unique_ptr<Instance> instance;  // autoscaled: a fresh one (empty caches) each time the slot starts
  std::unique_ptr<SimExecutor> executor;
  const ReplayBackend* replay = nullptr;  // --backend replay: the executor
  SimClock clock;
  // Autoscaled runs: the slot's actor waits on `control` while off or starting; the times of its current
  // cold start (started_s, ready_s) and drain (drain_s); whether it has been live before.
  std::unique_ptr<sg::Signal> control;
  double started_s = 0, ready_s = 0, drain_s = 0;
  bool served = false;
  // SimConfig::scheduler_recv_interval: requests sent while the instance decodes, with their send times, and
  // the weight of the steps since its scheduler last received.
  std::vector<std::pair<RequestSpec, double>> inbox;
  int32_t recv_weight = 0;
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
      std::function<bool()> finished = [this] { return frame_.feeder().done(); };
      if (config.autoscale.enabled()) finished = [this, i] { return slot_finished(i); };
      slots_.push_back(
          std::make_unique<InstanceSlot>(*this, i, spec.config,
                                         make_executor(config, cost_models[static_cast<size_t>(i)], i,
                                                       frame_.platform(), frame_.link_meter(), first_gpu),
                                         std::move(finished)));
      instance_views_.push_back(slots_.back()->instance.get());
      frame_.recorder().describe_instance(i, spec.parallel_name, spec.config.dp_ranks,
                                          spec.config.kv.total_pages);
    }
    if (config.autoscale.enabled()) start_fleet();
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
  void receive(InstanceSlot& slot, const StepPlan& plan, const InstanceCounters& counters);
  Recorder& recorder() { return frame_.recorder(); }

 private:
  void dispatch(RequestSpec&& spec, double sent_s);
  void wake_instances();
  void fed();

  // Autoscaling (config_.autoscale.enabled()): the fleet's log and policy, the live slots the router
  // picks from (instance_views_ and live_slots_, in slot order), each slot's actor and the policy's.
  void start_fleet();
  bool slot_finished(int32_t index);
  void run_slot(InstanceSlot& slot);
  void run_autoscaler();
  void sync(double now_s);
  void start_instance(double now_s);
  void stop_instance(double now_s);
  void go_live(InstanceSlot& slot);
  void retire(InstanceSlot& slot);
  void set_state(InstanceSlot& slot, SlotState state, double now_s);
  void note_load(const InstanceSlot& slot, double now_s);
  void refresh_live();

  const SimConfig& config_;
  RunFrame frame_;
  Router router_;
  std::vector<std::unique_ptr<InstanceSlot>> slots_;
  std::vector<const Instance*> instance_views_;
  std::unique_ptr<FleetLog> fleet_;
  std::optional<Autoscaler> autoscaler_;
  std::vector<int32_t> live_slots_;
  std::unique_ptr<sg::Signal> autoscaler_signal_;
};

void InstanceSlot::on_preemption(RequestId id, double now_s, bool retraction) {
  driver.recorder().on_preemption(index, id, now_s, retraction);
}

void InstanceSlot::on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
                           const InstanceCounters& counters) {
  driver.on_step(*this, plan, outcome, start_s, counters);
  driver.receive(*this, plan, counters);
}

void InstanceSlot::on_records(std::span<const RequestRecord> records) {
  driver.on_records(index, records);
}

// The request reaches the engine now; its record's arrival is the client's send time. Autoscaled, the
// router sees the live instances only (instance_views_ holds them, live_slots_ their slot indexes).
void Driver::dispatch(RequestSpec&& spec, double sent_s) {
  const int32_t picked = router_.pick(instance_views_, spec);
  const int32_t index = fleet_ ? live_slots_[static_cast<size_t>(picked)] : picked;
  InstanceSlot& slot = *slots_[static_cast<size_t>(index)];
  frame_.recorder().on_arrival(index, spec.id, sent_s);
  if (config_.scheduler_recv_interval > 1 && slot.instance->counters().running > 0) {
    slot.inbox.emplace_back(std::move(spec), sent_s);  // the scheduler takes it in after a later step
    return;
  }
  slot.instance->add_request(std::move(spec), sent_s);
  if (fleet_) note_load(slot, sg::now_s());
  slot.clock.wake();
}

// SGLang's SchedulerRecvSkipper (scheduler_recv_skipper.py, 0.5.x): each loop iteration adds the weight of
// the last batch's forward mode - DECODE 1, any other (extend, mixed) _DEFAULT_WEIGHT 1000 - and receives
// once the sum reaches --scheduler-recv-interval; an instance that no longer decodes receives at once. The
// requests keep their send times (their TTFT counts the wait). Called after each step, before the next plan.
void Driver::receive(InstanceSlot& slot, const StepPlan& plan, const InstanceCounters& counters) {
  if (config_.scheduler_recv_interval <= 1) return;
  constexpr int32_t kDecodeWeight = 1, kOtherWeight = 1000;
  bool prefill = false;
  for (const Batch& b : plan.batches.ranks) prefill = prefill || b.prefill_tokens() > 0;
  slot.recv_weight += prefill ? kOtherWeight : kDecodeWeight;
  if (slot.recv_weight < config_.scheduler_recv_interval && counters.running > 0) return;
  slot.recv_weight = 0;
  if (slot.inbox.empty()) return;
  for (auto& [spec, sent_s] : slot.inbox) slot.instance->add_request(std::move(spec), sent_s);
  slot.inbox.clear();
  if (fleet_) note_load(slot, sg::now_s());
}

void Driver::wake_instances() {
  for (auto& slot : slots_) slot->clock.wake();
}

// The feeder has sent its last request: idle instances may end, and with a fleet the policy stops, slots
// that are off end and cold starts still under way are called off.
void Driver::fed() {
  wake_instances();
  if (!fleet_) return;
  if (autoscaler_signal_) autoscaler_signal_->notify();
  for (auto& slot : slots_) {
    if (slot->control) slot->control->notify();
  }
}

void Driver::on_records(int32_t index, std::span<const RequestRecord> records) {
  for (const RequestRecord& r : records) {
    frame_.recorder().on_record(r, index);
    if (!fleet_ || r.status != RequestStatus::kFinished) continue;
    // As metrics.json's goodput: the client's first token (the profile's first-token latency after it).
    const double first_s = r.first_token_s + config_.feed.first_token_latency_s;
    const double finish_s = std::max(r.finish_s, first_s);
    const bool ttft_ok = config_.slo.ttft_s <= 0 || first_s - r.arrival_s <= config_.slo.ttft_s;
    const bool tpot_ok = config_.slo.tpot_s <= 0 ||
                         request_tpot_s(first_s, finish_s, r.generated_tokens) <= config_.slo.tpot_s;
    fleet_->on_finished(finish_s, ttft_ok && tpot_ok);
  }
  frame_.feeder().on_finished(records);
  frame_.feeder().wake();
}

void Driver::on_step(const InstanceSlot& slot, const StepPlan& plan, const StepOutcome& outcome,
                     double start_s, const InstanceCounters& counters) {
  frame_.recorder().on_step(slot.index, plan, outcome, slot.executor->last_breakdown(), start_s, counters);
  if (fleet_) note_load(slot, sg::now_s());
}

SimResult Driver::run() {
  std::unique_ptr<sg::SimEngine> engine = frame_.engine([this] { fed(); });
  for (auto& slot : slots_) {
    InstanceSlot* s = slot.get();
    if (fleet_) {
      engine->add_actor("instance-" + std::to_string(s->index), [this, s] { run_slot(*s); });
    } else {
      engine->add_actor("instance-" + std::to_string(s->index),
                        [s] { run_instance_loop(*s->instance, *s->executor, s->clock, *s); });
    }
  }
  if (fleet_) engine->add_actor("autoscaler", [this] { run_autoscaler(); });
  return frame_.run(*engine, slots_.front()->replay ? "replay" : std::string(to_string(config_.backend)),
                    fleet_.get());
}

// ---- autoscaling -------------------------------------------------------------------------------------

void Driver::start_fleet() {
  std::vector<int32_t> gpus;
  for (const SimConfig::InstanceSpec& spec : config_.instances) gpus.push_back(spec.gpus);
  fleet_ = std::make_unique<FleetLog>(config_.autoscale, std::move(gpus), config_.slo.enabled());
  autoscaler_.emplace(config_.autoscale);
  ChromeTraceWriter& trace = frame_.recorder().trace();
  if (trace.enabled()) {
    trace.process_name(kFleetTracePid, "fleet");
    for (auto& slot : slots_) trace.thread_name(slot->index + 1, kLifecycleTid, "lifecycle");
  }
  for (int32_t i = 0; i < config_.autoscale.initial_instances; ++i) {
    InstanceSlot& slot = *slots_[static_cast<size_t>(i)];
    set_state(slot, SlotState::kLive, 0.0);  // the starting fleet is up before the run, as a fixed one is
    slot.served = true;
    note_load(slot, 0.0);
  }
  refresh_live();
}

// An autoscaled instance's loop ends once the feed has ended and it is idle (as a fixed fleet's), or once
// it drains and has nothing left.
bool Driver::slot_finished(int32_t index) {
  const InstanceSlot& slot = *slots_[static_cast<size_t>(index)];
  if (frame_.feeder().done()) return true;
  return fleet_->state(index) == SlotState::kDraining && !slot.instance->has_work();
}

void Driver::set_state(InstanceSlot& slot, SlotState state, double now_s) {
  fleet_->set_state(slot.index, state, now_s);
  ChromeTraceWriter& trace = frame_.recorder().trace();
  if (!trace.enabled()) return;
  trace.counter(kFleetTracePid, "instances", now_s,
                {{"live", fleet_->count(SlotState::kLive)},
                 {"starting", fleet_->count(SlotState::kStarting)},
                 {"draining", fleet_->count(SlotState::kDraining)}});
}

void Driver::note_load(const InstanceSlot& slot, double now_s) {
  const InstanceCounters c = slot.instance->counters();
  fleet_->on_load(slot.index, now_s, c.waiting, c.running, c.kv.used_pages, c.kv.total_pages);
}

void Driver::refresh_live() {
  live_slots_.clear();
  instance_views_.clear();
  for (auto& slot : slots_) {
    if (fleet_->state(slot->index) != SlotState::kLive) continue;
    live_slots_.push_back(slot->index);
    instance_views_.push_back(slot->instance.get());
  }
}

// A slot's actor: off until the policy starts it, then its cold start, then the instance loop while it is
// live and draining; drained, it is off again (and may start again, as a new instance).
void Driver::run_slot(InstanceSlot& slot) {
  slot.control = std::make_unique<sg::Signal>();
  while (true) {
    while (fleet_->state(slot.index) == SlotState::kOff) {
      if (frame_.feeder().done()) return;
      slot.control->wait();
    }
    while (fleet_->state(slot.index) == SlotState::kStarting && sg::now_s() < slot.ready_s &&
           !frame_.feeder().done()) {
      slot.control->wait_until(slot.ready_s);
    }
    if (fleet_->state(slot.index) == SlotState::kOff) continue;  // called off by a scale-down
    if (fleet_->state(slot.index) == SlotState::kStarting) {
      if (sg::now_s() < slot.ready_s) {  // the feed ended first: no request will come to it
        frame_.recorder().trace().complete(slot.index + 1, kLifecycleTid, "cold_start (called off)",
                                           slot.started_s, sg::now_s() - slot.started_s);
        set_state(slot, SlotState::kOff, sg::now_s());
        return;
      }
      go_live(slot);
    }
    run_instance_loop(*slot.instance, *slot.executor, slot.clock, slot);
    if (fleet_->state(slot.index) != SlotState::kDraining || slot.instance->has_work()) return;
    retire(slot);
  }
}

void Driver::go_live(InstanceSlot& slot) {
  if (slot.served) {  // a new instance in a slot used before: empty caches and pools
    slot.instance = std::make_unique<Instance>(config_.instances[static_cast<size_t>(slot.index)].config);
  }
  slot.served = true;
  ChromeTraceWriter& trace = frame_.recorder().trace();
  const int pid = slot.index + 1;
  trace.complete(pid, kLifecycleTid, "cold_start", slot.started_s, slot.ready_s - slot.started_s);
  trace.complete(pid, kLifecycleTid, "load_weights", slot.started_s, config_.autoscale.weights_load_s);
  trace.complete(pid, kLifecycleTid, "engine_start", slot.started_s + config_.autoscale.weights_load_s,
                 config_.autoscale.engine_start_s);
  set_state(slot, SlotState::kLive, sg::now_s());
  note_load(slot, sg::now_s());
  refresh_live();
}

// A drained instance: every request it held has left, so every KV page is free or only cached (the
// conservation the drain log records); a page still needed, or a broken pool, fails the run.
void Driver::retire(InstanceSlot& slot) {
  frame_.recorder().trace().complete(slot.index + 1, kLifecycleTid, "draining", slot.drain_s,
                                     sg::now_s() - slot.drain_s);
  const InstanceCounters c = slot.instance->counters();
  fleet_->on_drain_end(slot.index, sg::now_s(), c.kv.used_pages);
  std::string why;
  if (c.kv.used_pages != 0 || !slot.instance->check(&why))
    throw std::runtime_error("instance " + std::to_string(slot.index) + " drained holding " +
                             std::to_string(c.kv.used_pages) + " KV pages someone needs" +
                             (why.empty() ? "" : ": " + why));
  set_state(slot, SlotState::kOff, sg::now_s());
}

// The policy's actor: a sync every interval until the feed ends.
void Driver::run_autoscaler() {
  autoscaler_signal_ = std::make_unique<sg::Signal>();
  double next_s = config_.autoscale.interval_s;
  while (!frame_.feeder().done()) {
    if (sg::now_s() < next_s) {
      autoscaler_signal_->wait_until(next_s);
      continue;
    }
    sync(next_s);
    next_s += config_.autoscale.interval_s;
  }
}

// The metric is averaged over the instances that served (live and draining), while the policy counts those
// live and starting: a load metric is rescaled to the latter, so that a cold start under way counts as an
// instance with no load yet (HPA treats not-yet-ready pods as using 0% when it scales up) and the desired
// count is the load over the target.
void Driver::sync(double now_s) {
  std::optional<double> metric = fleet_->sync(now_s);
  int32_t current = fleet_->count(SlotState::kLive) + fleet_->count(SlotState::kStarting);
  const int32_t serving = fleet_->count(SlotState::kLive) + fleet_->count(SlotState::kDraining);
  if (metric && config_.autoscale.metric != ScaleMetric::kSlo && current > 0)
    metric = *metric * serving / current;
  const int32_t desired = autoscaler_->recommend(now_s, current, metric);
  fleet_->on_decision(now_s, current, desired, metric);
  for (; current < desired && fleet_->count(SlotState::kOff) > 0; ++current) start_instance(now_s);
  for (; current > desired; --current) stop_instance(now_s);
}

// The lowest off slot starts its cold start.
void Driver::start_instance(double now_s) {
  for (auto& slot : slots_) {
    if (fleet_->state(slot->index) != SlotState::kOff) continue;
    slot->started_s = now_s;
    slot->ready_s = now_s + config_.autoscale.cold_start_s();
    set_state(*slot, SlotState::kStarting, now_s);
    if (slot->control) slot->control->notify();
    return;
  }
}

// A scale-down calls off the newest cold start if there is one, else drains the highest live slot: it
// takes no new request and finishes its own.
void Driver::stop_instance(double now_s) {
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) {
    InstanceSlot& slot = **it;
    if (fleet_->state(slot.index) != SlotState::kStarting) continue;
    frame_.recorder().trace().complete(slot.index + 1, kLifecycleTid, "cold_start (called off)",
                                       slot.started_s, now_s - slot.started_s);
    set_state(slot, SlotState::kOff, now_s);
    if (slot.control) slot.control->notify();
    return;
  }
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) {
    InstanceSlot& slot = **it;
    if (fleet_->state(slot.index) != SlotState::kLive) continue;
    slot.drain_s = now_s;
    const InstanceCounters c = slot.instance->counters();
    fleet_->on_drain_start(slot.index, now_s, c.waiting + c.running, c.kv.used_pages, c.kv.cached_pages);
    set_state(slot, SlotState::kDraining, now_s);
    refresh_live();
    slot.clock.wake();  // an idle loop looks again and ends
    return;
  }
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
  result.bounded_share = m.bounded_share();
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
  double gpu_hours = 0;
  if (end.fleet != nullptr) {
    end.fleet->close(result.simulated_s);
    gpu_hours = end.fleet->gpu_hours();
    if (end.decode_fleet != nullptr) {
      end.decode_fleet->close(result.simulated_s);
      gpu_hours += end.decode_fleet->gpu_hours();
    }
  } else {
    for (const SimConfig::InstanceSpec& spec : config.instances)
      gpu_hours += spec.gpus * result.simulated_s / 3600.0;
  }
  if (config.cost.enabled()) {
    info.extra_blocks.emplace_back("cost", cost_block_json({.usd_per_gpu_hour = config.cost.usd_per_gpu_hour,
                                                            .price_source = config.cost.price_source,
                                                            .gpu_hours = gpu_hours,
                                                            .input_tokens = m.input_tokens(),
                                                            .output_tokens = m.output_tokens(),
                                                            .cached_tokens = m.prefix_hit_tokens()}));
  }
  if (end.fleet != nullptr) {
    info.extra_blocks.emplace_back("autoscaling", end.decode_fleet != nullptr
                                                      ? pd_fleet_json(*end.fleet, *end.decode_fleet)
                                                      : end.fleet->json());
  }
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
