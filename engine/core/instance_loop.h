// run_instance_loop: THE step loop (docs/architecture.md "The four contracts", 2), written once and driven by
// both worlds: the simulation's instance actors (sim/driver: a SimGrid clock, cost-model executors) and the
// real engine (engine/runtime/engine_loop: the engine clock over steady_clock, the model runner).
//
//   drain records -> idle? wait for work : plan -> report preemptions -> (empty plan: commit it, count it)
//   -> [allocate pages when the executor reads page tables] -> execute -> sleep to the step's end -> commit
//   -> record
//
// The loop owns no time, no I/O and no request source: time and waiting go through a LoopClock (the seam,
// in the manner of LevelDB's Env), everything a driver does between the core's calls goes through a
// StepObserver. Never throws (SimGrid aborts on an exception escaping an actor).
#pragma once

#include <cstdint>
#include <span>

#include "engine/core/executor.h"
#include "engine/core/instance.h"

namespace tokenline {

// An empty plan still commits its preemptions, which can free pages so the next plan admits; a second
// empty plan in a row means nothing changes until a request arrives or leaves, so the loop waits for work.
constexpr int kEmptyPlansBeforeWaiting = 2;

// The loop's one seam to time. Sim: SimGrid's virtual clock (sim/simgrid/sim_clock.h); real: the engine
// clock (engine/runtime/engine_clock.h). Called from the loop's own thread or actor only.
class LoopClock {
 public:
  virtual ~LoopClock() = default;
  // The current time; a step that starts now starts at this time.
  virtual double now_s() = 0;
  // Returns once the clock reads at least t_s, with the time it then reads (what the step commits at).
  // Requests that arrive meanwhile join the instance before it returns.
  virtual double sleep_until(double t_s) = 0;
  // The instance is idle (no work, work that cannot be planned, or may_step() false): blocks until work
  // may have come (an arrival, a hand-off, freed decode memory). False when none ever will: the loop ends.
  virtual bool wait_for_work() = 0;
};

// What a driver does between the core's calls. Every call comes from the loop's thread or actor.
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  // False holds the instance idle although it has work (a PD prefill instance whose hand-offs wait for
  // decode memory).
  virtual bool may_step() { return true; }
  // A planned preemption (before the commit that applies it); retraction: SGLang-style, out of KV in decode.
  virtual void on_preemption(RequestId id, double now_s, bool retraction) = 0;
  // The non-empty plan is about to execute (its page tables filled when the executor reads them).
  virtual void before_execute(const StepPlan& plan, double start_s) {
    (void)plan;
    (void)start_s;
  }
  virtual void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
                       const InstanceCounters& counters) = 0;
  // Records drained from the instance (finished, handed off, rejected) in drain order; never empty.
  virtual void on_records(std::span<const RequestRecord> records) = 0;
};

struct InstanceLoopResult {
  int64_t steps = 0;  // executed (non-empty) steps
};

// Runs until clock.wait_for_work() says no work will come. REQUIRES: the three outlive the call.
InstanceLoopResult run_instance_loop(Instance& instance, Executor& executor, LoopClock& clock,
                                     StepObserver& observer);

// Fills plan.batches.pages (one CSR page table per rank) from the instance's page tables. REQUIRES:
// instance.allocate(plan) ran and nothing changed the instance since.
void attach_page_tables(const Instance& instance, StepPlan& plan);
// Moves each rank's logged host-tier copies (decided since the last step's) into plan.batches.tier_copies.
void attach_tier_copies(Instance& instance, StepPlan& plan);

}  // namespace tokenline
