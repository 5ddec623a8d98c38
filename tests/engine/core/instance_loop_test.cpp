#include "engine/core/instance_loop.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <utility>
#include <vector>

#include "tests/engine/core/core_test_util.h"
#include "tests/engine/core/fake_executor.h"

namespace tokenline {
namespace {

using test::FakeExecutor;
using test::make_config;
using test::make_spec;

// Virtual time that jumps where it is told; once idle, it releases one batch of arrivals per wait (each
// at the clock's time) and then says no work will come.
class ScriptedClock final : public LoopClock {
 public:
  explicit ScriptedClock(Instance& instance) : instance_(instance) {}
  std::vector<std::vector<RequestSpec>> later;  // arrival batches, one per wait_for_work
  int waits = 0;
  double t_s = 0;

  double now_s() override { return t_s; }
  double sleep_until(double until_s) override {
    if (until_s > t_s) t_s = until_s;
    return t_s;
  }
  bool wait_for_work() override {
    if (waits >= static_cast<int>(later.size())) return false;
    for (RequestSpec& s : later[static_cast<size_t>(waits)]) instance_.add_request(std::move(s), t_s);
    ++waits;
    return true;
  }

 private:
  Instance& instance_;
};

struct Recording final : StepObserver {
  bool allow = true;
  std::vector<double> step_starts;
  std::vector<double> before_starts;
  std::vector<RequestRecord> records;
  int64_t preemptions = 0;

  bool may_step() override { return allow; }
  void on_preemption(RequestId, double, bool) override { ++preemptions; }
  void before_execute(const StepPlan&, double start_s) override { before_starts.push_back(start_s); }
  void on_step(const StepPlan&, const StepOutcome&, double start_s, const InstanceCounters&) override {
    step_starts.push_back(start_s);
  }
  void on_records(std::span<const RequestRecord> rs) override {
    REQUIRE_FALSE(rs.empty());
    records.insert(records.end(), rs.begin(), rs.end());
  }
};

// Reads page tables, and checks each step's tables against its batches.
struct PagedExecutor final : FakeExecutor {
  bool reads_page_tables() const override { return true; }
  int64_t checked = 0;
  StepOutcome execute(const StepBatches& step) override {
    REQUIRE(step.pages.size() == step.ranks.size());
    for (size_t r = 0; r < step.ranks.size(); ++r) {
      const BatchPages& t = step.pages[r];
      REQUIRE(t.indptr.size() == step.ranks[r].entries.size() + 1);
      for (size_t i = 0; i < step.ranks[r].entries.size(); ++i) {
        const BatchEntry& e = step.ranks[r].entries[i];
        CHECK(t.indptr[i + 1] - t.indptr[i] >=
              (e.context_tokens + e.new_tokens + test::kPage - 1) / test::kPage);
        ++checked;
      }
    }
    return FakeExecutor::execute(step);
  }
};

// Virtual time whose sleeps deliver the arrivals that fall inside them, each at its own time.
class ArrivalsClock final : public LoopClock {
 public:
  explicit ArrivalsClock(Instance& instance) : instance_(instance) {}
  std::vector<std::pair<double, RequestSpec>> arrivals;  // by time
  double t_s = 0;

  double now_s() override { return t_s; }
  double sleep_until(double until_s) override {
    deliver(until_s);
    if (until_s > t_s) t_s = until_s;
    return t_s;
  }
  bool wait_for_work() override {
    if (next_ >= arrivals.size()) return false;
    t_s = std::max(t_s, arrivals[next_].first);
    deliver(t_s + 1e-9);
    return true;
  }

 private:
  void deliver(double before_s) {
    for (; next_ < arrivals.size() && arrivals[next_].first < before_s; ++next_)
      instance_.add_request(std::move(arrivals[next_].second), arrivals[next_].first);
  }
  Instance& instance_;
  size_t next_ = 0;
};

// First-token times of one run: request 1 at t=0 (1 s steps), request 2 arriving at 1.5 while the second
// step runs, request 3 at 20 when the instance is idle.
std::vector<double> first_tokens(bool plan_ahead) {
  InstanceConfig config = make_config(64);
  config.plan_ahead = plan_ahead;
  Instance instance(config);
  instance.add_request(make_spec(1, 100, 5), 0);
  ArrivalsClock clock(instance);
  clock.arrivals.emplace_back(1.5, make_spec(2, 100, 2));
  clock.arrivals.emplace_back(20.0, make_spec(3, 100, 2));
  FakeExecutor exec;
  Recording obs;
  run_instance_loop(instance, exec, clock, obs);
  std::vector<double> out(3, -1);
  for (const RequestRecord& r : obs.records) out[static_cast<size_t>(r.id - 1)] = r.first_token_s;
  return out;
}

}  // namespace

TEST_CASE("instance loop: planning ahead, a request arriving during step n is first scheduled in n+2",
          "[instance_loop]") {
  // Without: request 2 joins the step at t=2 (first token at 3). SGLang's overlap loop planned that step
  // when the one at t=1 started, before request 2 arrived: it joins the step at t=3 (first token at 4).
  // Request 3 finds nothing in flight and is scheduled as it arrives either way.
  CHECK(first_tokens(false) == std::vector<double>{1, 3, 21});
  CHECK(first_tokens(true) == std::vector<double>{1, 4, 21});
}

// Two requests at t=0 (prefill in one step, then decodes of 1 s each), a third after the instance went
// idle: every step starts where the previous one ended, the idle wait admits the third, and each request
// leaves through on_records exactly once.
TEST_CASE("instance loop: steps back to back, waits when idle, hands out every record", "[instance_loop]") {
  Instance instance(make_config(64));
  instance.add_request(make_spec(1, 100, 3), 0);
  instance.add_request(make_spec(2, 100, 3), 0);
  ScriptedClock clock(instance);
  clock.later = {{make_spec(3, 100, 2)}};
  FakeExecutor exec;
  Recording obs;
  const InstanceLoopResult r = run_instance_loop(instance, exec, clock, obs);
  // t=0 prefill both (first token), t=1, t=2 decodes -> done at 3; request 3: prefill at 3, decode at 4.
  CHECK(obs.step_starts == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(obs.before_starts == obs.step_starts);
  CHECK(r.steps == 5);
  CHECK(static_cast<int64_t>(exec.history.size()) == r.steps);
  CHECK(clock.waits == 1);
  REQUIRE(obs.records.size() == 3);
  for (const RequestRecord& rec : obs.records) CHECK(rec.status == RequestStatus::kFinished);
  CHECK(obs.records[2].finish_s == 5);
  CHECK_FALSE(instance.has_work());
  for (const StepBatches& s : exec.history) CHECK(s.pages.empty());  // a cost model gets no page tables
}

TEST_CASE("instance loop: an executor that reads page tables gets the core's, covering each entry",
          "[instance_loop]") {
  InstanceConfig config = make_config(64);
  config.dp_ranks = 2;
  Instance instance(config);
  for (RequestId id = 1; id <= 4; ++id) instance.add_request(make_spec(id, 150, 4), 0);
  ScriptedClock clock(instance);
  PagedExecutor exec;
  Recording obs;
  run_instance_loop(instance, exec, clock, obs);
  CHECK(obs.records.size() == 4);
  CHECK(exec.checked >= 4 * 4);  // every request's prefill and decodes
}

TEST_CASE("instance loop: an observer that holds the instance makes the loop wait, never step",
          "[instance_loop]") {
  Instance instance(make_config(64));
  instance.add_request(make_spec(1, 100, 3), 0);
  ScriptedClock clock(instance);
  clock.later = {{}, {}};  // two wake-ups with nothing new, then no more work
  FakeExecutor exec;
  Recording obs;
  obs.allow = false;  // a back-pressured PD prefill instance
  const InstanceLoopResult r = run_instance_loop(instance, exec, clock, obs);
  CHECK(r.steps == 0);
  CHECK(clock.waits == 2);
  CHECK(instance.has_work());
}

}  // namespace tokenline
