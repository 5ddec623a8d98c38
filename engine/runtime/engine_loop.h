// run_engine_loop: the real engine driving the instance loop (engine/core/instance_loop.h) with the model
// runner as executor and the engine clock (engine/runtime/engine_clock.h) fed by a RequestFeed: the clock
// advances by each step's measured duration and, when the instance is idle, sleeps until the next arrival
// and jumps to it; requests join at their arrival times, including those that arrive while a step executes
// (added before that step's commit) - the same order of events as the sim's driver, so a replay of the
// measured durations reproduces every decision. The loop allocates each step's pages before executing it
// (the runner reads page tables); arrivals during the step then join after that allocation, which decides
// the same as joining before it, except that pages evicted by the allocation can change a prefix-aware
// rank assignment (tokenline run assigns round-robin). Scheduling and recording between steps are not
// counted in step durations.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/instance.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/model_runner.h"
#include "engine/runtime/request_feed.h"

namespace tokenline {

// Receives the loop's events (the CLI forwards them to the output recorder).
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void on_arrival(RequestId id, double now_s) = 0;
  virtual void on_preemption(RequestId id, double now_s, bool retraction) = 0;
  virtual void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
                       const InstanceCounters& counters) = 0;
  virtual void on_record(const RequestRecord& record) = 0;
};

struct EngineLoopResult {
  int64_t steps = 0;
  double end_s = 0;  // engine clock at the end
};

// Runs until the feed has no more requests and every admitted one has left. REQUIRES: prompt ids within
// the runner's vocab.
EngineLoopResult run_engine_loop(Instance& instance, ModelRunner& runner, Clock& clock, RequestFeed& feed,
                                 uint64_t prompt_seed, EngineObserver& observer);
// A recorded workload. REQUIRES: arrivals sorted by arrival_s.
EngineLoopResult run_engine_loop(Instance& instance, ModelRunner& runner, Clock& clock,
                                 std::span<const TimedRequest> arrivals, uint64_t prompt_seed,
                                 EngineObserver& observer);

}  // namespace tokenline
