#include "engine/core/instance_loop.h"

#include <algorithm>
#include <vector>

namespace tokenline {
namespace {

class Loop {
 public:
  Loop(Instance& instance, Executor& executor, LoopClock& clock, StepObserver& observer)
      : instance_(instance), executor_(executor), clock_(clock), observer_(observer) {}

  InstanceLoopResult run();

 private:
  void drain();
  void report_preemptions(double now_s);
  bool step();

  Instance& instance_;
  Executor& executor_;
  LoopClock& clock_;
  StepObserver& observer_;
  StepPlan plan_;  // reused across steps
  // The last executed step: with an overlap scheduler the next plan was made when it started.
  double last_start_s_ = -1, last_end_s_ = -1;
  std::vector<RequestRecord> drained_;
};

void Loop::drain() {
  instance_.drain(drained_);
  if (drained_.empty()) return;
  observer_.on_records(drained_);
  drained_.clear();
}

void Loop::report_preemptions(double now_s) {
  for (size_t r = 0; r < plan_.ranks.size(); ++r) {
    const Scheduler& rank = instance_.rank(static_cast<int32_t>(r));
    const std::vector<int32_t>& retractions = plan_.ranks[r].retractions;
    for (int32_t victim : plan_.ranks[r].preemptions) {
      const bool retraction = std::find(retractions.begin(), retractions.end(), victim) != retractions.end();
      observer_.on_preemption(rank.request(victim).record.id, now_s, retraction);
    }
  }
}

// One planned step; false when the plan was empty (committed at once: it may carry preemptions).
bool Loop::step() {
  const double start_s = clock_.now_s();
  // SGLang's overlap loop plans step n+1 right after launching step n: back to back, this step was planned
  // when the last one started and sees only the requests that had arrived by then. With nothing in flight
  // (an empty plan) the engine schedules a request as soon as it is received.
  const bool planned_ahead = instance_.plans_ahead() && last_end_s_ >= start_s;
  if (planned_ahead) {
    instance_.plan(plan_, last_start_s_);
    if (plan_.empty()) instance_.plan(plan_);
  } else {
    instance_.plan(plan_);
  }
  report_preemptions(start_s);
  if (plan_.empty()) {
    instance_.commit(plan_, StepOutcome{}, start_s);
    return false;
  }
  if (executor_.reads_page_tables()) {
    instance_.allocate(plan_);  // the core's first half of commit: page tables now cover the step
    attach_page_tables(instance_, plan_);
    attach_tier_copies(instance_, plan_);
  }
  observer_.before_execute(plan_, start_s);
  const StepOutcome outcome = executor_.execute(plan_.batches);
  const double end_s = clock_.sleep_until(start_s + outcome.duration_s);
  last_start_s_ = start_s;
  last_end_s_ = end_s;
  instance_.commit(plan_, outcome, end_s);
  observer_.on_step(plan_, outcome, start_s, instance_.counters());
  return true;
}

InstanceLoopResult Loop::run() {
  InstanceLoopResult result;
  int empty_plans = 0;
  while (true) {
    drain();
    const bool idle =
        !observer_.may_step() || !instance_.has_work() || empty_plans >= kEmptyPlansBeforeWaiting;
    if (idle) {
      if (!clock_.wait_for_work()) break;
      empty_plans = 0;
      continue;
    }
    if (step()) {
      empty_plans = 0;
      ++result.steps;
    } else {
      ++empty_plans;
    }
  }
  return result;
}

}  // namespace

void attach_page_tables(const Instance& instance, StepPlan& plan) {
  plan.batches.pages.resize(plan.batches.ranks.size());
  for (size_t r = 0; r < plan.batches.ranks.size(); ++r) {
    const KvManager& kv = instance.rank(static_cast<int32_t>(r)).kv();
    BatchPages& pages = plan.batches.pages[r];
    pages.indptr.assign(1, 0);
    pages.indices.clear();
    pages.window_indptr.clear();
    pages.window_indices.clear();
    pages.window_first.clear();
    pages.state_slots.clear();
    if (kv.has_window()) pages.window_indptr.push_back(0);
    for (int32_t slot : plan.ranks[r].entry_slots) {
      const std::span<const PageId> table = kv.page_table(slot);
      pages.indices.insert(pages.indices.end(), table.begin(), table.end());
      pages.indptr.push_back(static_cast<int32_t>(pages.indices.size()));
      if (kv.has_window()) {
        const std::span<const PageId> window = kv.window_page_table(slot);
        pages.window_indices.insert(pages.window_indices.end(), window.begin(), window.end());
        pages.window_indptr.push_back(static_cast<int32_t>(pages.window_indices.size()));
        pages.window_first.push_back(static_cast<int32_t>(kv.window_first_page(slot)));
      }
      if (kv.state().enabled()) pages.state_slots.push_back(kv.state().slot_of(slot));
    }
  }
}

void attach_tier_copies(Instance& instance, StepPlan& plan) {
  plan.batches.tier_copies.resize(plan.batches.ranks.size());
  for (size_t r = 0; r < plan.batches.ranks.size(); ++r)
    instance.take_tier_copies(static_cast<int32_t>(r), plan.batches.tier_copies[r]);
}

InstanceLoopResult run_instance_loop(Instance& instance, Executor& executor, LoopClock& clock,
                                     StepObserver& observer) {
  Loop loop(instance, executor, clock, observer);
  return loop.run();
}

}  // namespace tokenline
