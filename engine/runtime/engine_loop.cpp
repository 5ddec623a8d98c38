#include "engine/runtime/engine_loop.h"

#include <algorithm>

#include "engine/runtime/byte_tokenizer.h"

namespace tokenline {
namespace {

class Loop {
 public:
  Loop(Instance& instance, ModelRunner& runner, Clock& clock, RequestFeed& feed, uint64_t prompt_seed,
       EngineObserver& observer)
      : instance_(instance),
        runner_(runner),
        clock_(clock),
        feed_(feed),
        seed_(prompt_seed),
        observer_(observer) {}

  EngineLoopResult run();

 private:
  void admit_until(double t_s);
  bool step();
  void drain();

  Instance& instance_;
  ModelRunner& runner_;
  Clock& clock_;
  RequestFeed& feed_;
  uint64_t seed_;
  EngineObserver& observer_;
  std::vector<TimedRequest> arrived_;
  double now_s_ = 0;
  int64_t steps_ = 0;
  StepPlan plan_;
  std::vector<RequestRecord> drained_;
};

// Adds every request that has arrived by t_s, each at its own arrival time (as the sim's feeder does).
void Loop::admit_until(double t_s) {
  arrived_.clear();
  feed_.take_until(t_s, arrived_);
  for (const TimedRequest& a : arrived_) {
    runner_.set_prompt(a.spec.id, synthesize_prompt(a.spec, seed_));
    observer_.on_arrival(a.spec.id, a.arrival_s);
    instance_.add_request(a.spec, a.arrival_s);
  }
}

void Loop::drain() {
  instance_.drain(drained_);
  for (const RequestRecord& r : drained_) {
    observer_.on_record(r);
    runner_.forget(r.id);
  }
  drained_.clear();
}

// One planned step; false when the plan was empty.
bool Loop::step() {
  if (feed_.wall_time()) {  // live arrivals carry wall-clock stamps: no step may start before them
    now_s_ = std::max(now_s_, clock_.now_s());
    admit_until(now_s_);
  }
  instance_.plan(plan_);
  for (size_t r = 0; r < plan_.ranks.size(); ++r) {
    const Scheduler& rank = instance_.rank(static_cast<int32_t>(r));
    for (int32_t victim : plan_.ranks[r].preemptions)
      observer_.on_preemption(rank.request(victim).record.id, now_s_);
  }
  if (plan_.empty()) {
    instance_.commit(plan_, StepOutcome{}, now_s_);  // applies any preemptions
    return false;
  }
  instance_.allocate(plan_);  // the core's first half of commit: page tables now cover the step
  runner_.set_step_pages(allocated_step_pages(instance_, plan_));
  const StepOutcome outcome = runner_.execute(plan_.batches);
  const double start_s = now_s_;
  now_s_ += outcome.duration_s;
  admit_until(now_s_);
  instance_.commit(plan_, outcome, now_s_);
  observer_.on_step(plan_, outcome, start_s, instance_.counters());
  ++steps_;
  return true;
}

EngineLoopResult Loop::run() {
  int empty_plans = 0;
  while (true) {
    drain();
    if (!instance_.has_work() || empty_plans >= 2) {
      double t_s = 0;
      if (!feed_.wait_next(clock_, &t_s)) break;
      if (t_s > now_s_) now_s_ = t_s;
      admit_until(now_s_);
      empty_plans = 0;
      continue;
    }
    empty_plans = step() ? 0 : empty_plans + 1;
  }
  return EngineLoopResult{.steps = steps_, .end_s = now_s_};
}

}  // namespace

StepPages allocated_step_pages(const Instance& instance, const StepPlan& plan) {
  StepPages pages(plan.batches.ranks.size());
  for (size_t r = 0; r < plan.batches.ranks.size(); ++r) {
    const KvManager& kv = instance.rank(static_cast<int32_t>(r)).kv();
    for (int32_t slot : plan.ranks[r].entry_slots) {
      const std::span<const PageId> table = kv.page_table(slot);
      pages[r].emplace_back(table.begin(), table.end());
    }
  }
  return pages;
}

EngineLoopResult run_engine_loop(Instance& instance, ModelRunner& runner, Clock& clock, RequestFeed& feed,
                                 uint64_t prompt_seed, EngineObserver& observer) {
  Loop loop(instance, runner, clock, feed, prompt_seed, observer);
  return loop.run();
}

EngineLoopResult run_engine_loop(Instance& instance, ModelRunner& runner, Clock& clock,
                                 std::span<const TimedRequest> arrivals, uint64_t prompt_seed,
                                 EngineObserver& observer) {
  WorkloadFeed feed(arrivals);
  return run_engine_loop(instance, runner, clock, feed, prompt_seed, observer);
}

}  // namespace tokenline
