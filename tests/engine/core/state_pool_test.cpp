// The recurrent-state slots of linear-attention models (engine/core/state_pool.h): taken at admission,
// returned at finish, preemption / retraction and never taken by a rejected request; the running batch never
// holds more requests than slots; a randomized property test with check() after every operation.
#include "engine/core/state_pool.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <pcg_random.hpp>

#include "engine/core/kv_manager.h"
#include "tests/engine/core/core_test_util.h"
#include "tests/engine/core/fake_executor.h"

namespace tokenline {

using test::FakeExecutor;
using test::make_config;
using test::make_spec;
using test::require_check;

namespace {

InstanceConfig hybrid_config(int64_t pages, int64_t slots) {
  InstanceConfig c = make_config(pages);
  c.kv.state_slots = slots;
  c.kv.state_bytes_per_slot = 24'007'680;  // Qwen3.5-397B-A17B at TP8 (linear_state_test.cpp)
  c.kv.prefix_cache = false;
  return c;
}

int64_t used_slots(const Instance& instance) {
  return instance.counters().kv.state_used_slots;
}

}  // namespace

TEST_CASE("StatePool: slots are taken and given back by holder, lowest first, and conserved",
          "[core][state_pool]") {
  StatePool pool(3);
  REQUIRE(pool.enabled());
  CHECK(pool.take(7) == 0);
  CHECK(pool.take(2) == 1);
  CHECK(pool.slot_of(7) == 0);
  CHECK(pool.used_slots() == 2);
  pool.give(7);
  pool.give(7);  // a holder without a slot: nothing
  CHECK_FALSE(pool.holds(7));
  CHECK(pool.take(9) == 0);  // the slot given back last is reused first
  CHECK(pool.take(4) == 2);
  CHECK(pool.free_slots() == 0);
  CHECK(pool.peak_used_slots() == 3);
  std::string why;
  CHECK(pool.check(&why));
  CHECK_FALSE(StatePool(0).enabled());
}

TEST_CASE("KvManager: admit takes the holder's state slot and release returns it, check() ties them",
          "[core][state_pool]") {
  KvConfig c;
  c.total_pages = 16;
  c.state_slots = 2;
  c.state_bytes_per_slot = 1000;
  KvManager kv(c);
  kv.admit(0, PrefixMatch{}, 64);
  REQUIRE(kv.grow(0, 64));
  kv.admit(1, PrefixMatch{}, 64);
  CHECK(kv.state().used_slots() == 2);
  CHECK(kv.counters().state_used_bytes == 2000);
  std::string why;
  CHECK(kv.check(&why));
  kv.release(0);
  CHECK(kv.state().free_slots() == 1);
  CHECK_FALSE(kv.state().holds(0));
  CHECK(kv.check(&why));
  kv.release(1);
  CHECK(kv.counters().state_peak_used_slots == 2);
  CHECK(kv.counters().state_used_slots == 0);
}

TEST_CASE("A hybrid model's requests take a state slot at admission and return it when they finish",
          "[core][state_pool]") {
  Instance instance(hybrid_config(1024, 4));
  for (RequestId id = 0; id < 3; ++id) REQUIRE(instance.add_request(make_spec(id, 200, 3), 0.0).accepted());
  CHECK(used_slots(instance) == 0);  // queued requests hold none
  FakeExecutor exec;
  double now_s = 0;
  now_s += test::step(instance, exec, now_s);  // all three prefill
  require_check(instance);
  CHECK(used_slots(instance) == 3);
  CHECK(instance.counters().running == 3);
  while (instance.has_work()) {
    now_s += test::step(instance, exec, now_s);
    require_check(instance);
  }
  CHECK(used_slots(instance) == 0);
  CHECK(instance.counters().kv.state_peak_used_slots == 3);
}

TEST_CASE("The free state slots bound the running batch as the request limit does", "[core][state_pool]") {
  Instance instance(hybrid_config(1024, 2));  // pages for all, slots for two
  for (RequestId id = 0; id < 5; ++id) REQUIRE(instance.add_request(make_spec(id, 100, 4), 0.0).accepted());
  FakeExecutor exec;
  double now_s = 0;
  int64_t most = 0;
  while (instance.has_work()) {
    const StepPlan plan = instance.plan();
    if (instance.counters().running == 2) CHECK(plan.ranks[0].stop != StopReason::kQueueEmpty);
    now_s += test::step(instance, exec, now_s);
    require_check(instance);
    most = std::max(most, instance.counters().running);
    CHECK(instance.counters().running <= 2);
    CHECK(used_slots(instance) == instance.counters().running);
  }
  CHECK(most == 2);
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.size() == 5);
  for (const RequestRecord& r : out) CHECK(r.status == RequestStatus::kFinished);
}

TEST_CASE("Preemption returns the victim's state slot, a rejected request never takes one",
          "[core][state_pool]") {
  Instance instance(hybrid_config(1024, 3));
  REQUIRE(instance.add_request(make_spec(0, 300, 50), 0.0).accepted());
  REQUIRE(instance.add_request(make_spec(1, 300, 50), 0.0).accepted());
  // Longer than the context: rejected at arrival, no slot.
  CHECK_FALSE(instance.add_request(make_spec(2, 5 * test::kMillion, 1), 0.0).accepted());
  CHECK(used_slots(instance) == 0);
  FakeExecutor exec;
  double now_s = 0;
  now_s += test::step(instance, exec, now_s);
  CHECK(used_slots(instance) == 2);
  REQUIRE(instance.preempt_one(0));
  require_check(instance);
  CHECK(used_slots(instance) == 1);
  CHECK(instance.counters().running == 1);
  while (instance.has_work()) {
    now_s += test::step(instance, exec, now_s);
    require_check(instance);
  }
  CHECK(used_slots(instance) == 0);
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.size() == 3);
  int64_t rejected = 0, preempted = 0;
  for (const RequestRecord& r : out) {
    rejected += r.status == RequestStatus::kRejected ? 1 : 0;
    preempted += r.preemptions;
  }
  CHECK(rejected == 1);
  CHECK(preempted == 1);
}

TEST_CASE("Retraction (SGLang's estimate admission) returns the retracted decodes' state slots",
          "[core][state_pool]") {
  // Pages for about two requests' growth, slots for four: decodes run out of pages and are retracted.
  InstanceConfig c = hybrid_config(12, 4);
  c.kv.reservation = ReservationPolicy::kEstimate;
  c.scheduler.estimate.init_ratio = 0.0;  // admit on the prompt alone: retraction must follow
  c.scheduler.estimate.min_ratio = 0.0;
  Instance instance(c);
  for (RequestId id = 0; id < 4; ++id) REQUIRE(instance.add_request(make_spec(id, 120, 200), 0.0).accepted());
  FakeExecutor exec;
  double now_s = 0;
  while (instance.has_work()) {
    now_s += test::step(instance, exec, now_s);
    require_check(instance);
    CHECK(used_slots(instance) == instance.counters().running);
  }
  CHECK(instance.counters().retractions > 0);
  CHECK(used_slots(instance) == 0);
}

namespace {

uint64_t seed_from_env() {
  const char* s = std::getenv("TOKENLINE_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 10) : 20261205;
}

int64_t uniform(pcg32& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng(static_cast<uint32_t>(hi - lo + 1)));
}

}  // namespace

TEST_CASE("Randomized: state slots conserved, one per running request, all free at the end",
          "[core][state_pool][property]") {
  const uint64_t seed = seed_from_env();
  INFO("seed " << seed << " (replay: TOKENLINE_SEED=" << seed << ")");
  pcg32 rng(seed);
  for (int round = 0; round < 8; ++round) {
    InstanceConfig c = hybrid_config(uniform(rng, 16, 80), uniform(rng, 1, 8));
    c.dp_ranks = static_cast<int32_t>(uniform(rng, 1, 2));
    c.kv.reservation = rng(2) == 0 ? ReservationPolicy::kWholeRequest : ReservationPolicy::kIncremental;
    c.scheduler.max_batch_tokens = uniform(rng, 64, 1024);
    c.scheduler.max_running_requests = static_cast<int32_t>(uniform(rng, 1, 12));
    c.scheduler.mixed_batches = rng(2) == 0;
    c.scheduler.max_context_tokens = 2048;
    Instance instance(c);
    INFO("round " << round << " slots " << c.kv.state_slots << " ranks " << c.dp_ranks);
    double now_s = 0;
    RequestId next = 0;
    FakeExecutor exec;
    std::vector<RequestRecord> out;
    int64_t handed_out = 0;
    for (int op = 0; op < 4000; ++op) {
      const int64_t what = uniform(rng, 0, 99);
      if (what < 35) {
        RequestSpec s = make_spec(next++, uniform(rng, 1, 900), uniform(rng, 1, 40));
        if (rng(20) == 0) s.prompt_tokens = 4000;  // over the context: rejected
        instance.add_request(std::move(s), now_s);
      } else if (what < 90) {
        now_s += test::step(instance, exec, now_s);
      } else if (what < 95) {
        instance.preempt_one(static_cast<int32_t>(uniform(rng, 0, c.dp_ranks - 1)));
      } else {
        out.clear();
        instance.drain(out);
        handed_out += static_cast<int64_t>(out.size());
      }
      require_check(instance);
      for (int32_t r = 0; r < instance.dp_ranks(); ++r) {
        const StatePool& pool = instance.rank(r).kv().state();
        REQUIRE(pool.used_slots() <= c.kv.state_slots);
        REQUIRE(pool.used_slots() == instance.rank(r).counters().running);
      }
    }
    while (instance.has_work()) now_s += test::step(instance, exec, now_s);
    out.clear();
    instance.drain(out);
    handed_out += static_cast<int64_t>(out.size());
    require_check(instance);
    const InstanceCounters k = instance.counters();
    REQUIRE(handed_out == k.arrived);
    REQUIRE(k.kv.state_used_slots == 0);
    REQUIRE(k.kv.state_total_slots == c.kv.state_slots * c.dp_ranks);
  }
}

}  // namespace tokenline
