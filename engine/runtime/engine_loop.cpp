#include "engine/runtime/engine_loop.h"

#include "engine/core/instance_loop.h"
#include "engine/runtime/engine_clock.h"
#include "engine/runtime/synthetic_prompt.h"

namespace tokenline {
namespace {

// The instance loop's observer in the real engine: forwards to the caller's EngineObserver and lets the
// runner forget the requests that left.
class RunnerObserver final : public StepObserver {
 public:
  RunnerObserver(ModelRunner& runner, EngineObserver& out, RequestFeed& feed)
      : runner_(runner), out_(out), feed_(feed) {}
  void on_preemption(RequestId id, double now_s, bool retraction) override {
    out_.on_preemption(id, now_s, retraction);
  }
  void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters) override {
    out_.on_step(plan, outcome, start_s, counters);
  }
  void on_records(std::span<const RequestRecord> records) override {
    for (const RequestRecord& r : records) {
      out_.on_record(r);
      runner_.forget(r.id);
      feed_.on_left(r, r.finish_s >= 0 ? r.finish_s : r.arrival_s);  // a session's next turn waits on it
    }
  }

 private:
  ModelRunner& runner_;
  EngineObserver& out_;
  RequestFeed& feed_;
};

}  // namespace

EngineLoopResult run_engine_loop(Instance& instance, ModelRunner& runner, Clock& clock, RequestFeed& feed,
                                 uint64_t prompt_seed, EngineObserver& observer) {
  EngineClock engine_clock(clock, feed, [&](const TimedRequest& a) {
    runner.set_prompt(a.spec.id, synthesize_prompt(a.spec, prompt_seed));
    observer.on_arrival(a.spec.id, a.arrival_s);
    instance.add_request(a.spec, a.arrival_s);
  });
  RunnerObserver step_observer(runner, observer, feed);
  const InstanceLoopResult result = run_instance_loop(instance, runner, engine_clock, step_observer);
  return EngineLoopResult{.steps = result.steps, .end_s = engine_clock.time_s()};
}

EngineLoopResult run_engine_loop(Instance& instance, ModelRunner& runner, Clock& clock,
                                 std::span<const TimedRequest> arrivals, uint64_t prompt_seed,
                                 EngineObserver& observer) {
  WorkloadFeed feed(arrivals);
  return run_engine_loop(instance, runner, clock, feed, prompt_seed, observer);
}

}  // namespace tokenline
