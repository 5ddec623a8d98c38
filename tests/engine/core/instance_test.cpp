#include "engine/core/instance.h"

#include <catch2/catch.hpp>

#include "tests/engine/core/core_test_util.h"
#include "tests/engine/core/fake_executor.h"

namespace tokenline {

using test::FakeExecutor;
using test::kPage;
using test::make_config;
using test::make_spec;
using test::require_check;

TEST_CASE("Bad requests are rejected with a reason, counted and handed out, never dropped",
          "[core][instance]") {
  constexpr int64_t kContext = 4096;
  constexpr int64_t kPool = 16;  // 1,024 tokens of KV
  InstanceConfig config = make_config(kPool);
  config.scheduler.max_context_tokens = kContext;
  Instance instance(config);
  CHECK(instance.add_request(make_spec(1, 0, 10), 0).reason == RejectReason::kNonPositivePrompt);
  CHECK(instance.add_request(make_spec(2, -5, 10), 0).reason == RejectReason::kNonPositivePrompt);
  CHECK(instance.add_request(make_spec(3, 10, 0), 0).reason == RejectReason::kNonPositiveOutput);
  CHECK(instance.add_request(make_spec(4, 10, -1), 0).reason == RejectReason::kNonPositiveOutput);
  CHECK(instance.add_request(make_spec(5, kContext, 1), 0).reason == RejectReason::kExceedsContext);
  CHECK(instance.add_request(make_spec(6, INT64_MAX, 1), 0).reason == RejectReason::kExceedsContext);
  CHECK(instance.add_request(make_spec(7, 1000, 100), 0).reason == RejectReason::kNeverFitsKv);
  CHECK(instance.add_request_with_kv(make_spec(8, 100, 10), 0).reason == RejectReason::kWrongRole);
  CHECK(instance.add_request(make_spec(9, 1000, 25), 0).accepted());  // 1,024 KV tokens: exactly the pool
  const InstanceCounters c = instance.counters();
  CHECK(c.arrived == 9);
  CHECK(c.rejected == 8);
  CHECK(c.rejected_by_reason[static_cast<int>(RejectReason::kNonPositivePrompt)] == 2);
  CHECK(c.rejected_by_reason[static_cast<int>(RejectReason::kNeverFitsKv)] == 1);
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.size() == 8);
  for (const RequestRecord& r : out) CHECK(r.status == RequestStatus::kRejected);
  CHECK(out[6].reject_reason == RejectReason::kNeverFitsKv);
  FakeExecutor exec;
  double t = 0;
  while (instance.has_work()) t += test::step(instance, exec, t);
  out.clear();
  instance.drain(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == RequestStatus::kFinished);
}

TEST_CASE("DP attention ranks step in lockstep, an idle rank has an empty batch", "[core][instance]") {
  InstanceConfig config = make_config(256);
  config.dp_ranks = 2;
  config.assignment = PlacementPolicy::kRoundRobin;
  Instance instance(config);
  REQUIRE(instance.add_request(make_spec(1, 100, 3), 0).rank == 0);
  REQUIRE(instance.add_request(make_spec(2, 100, 1), 0).rank == 1);
  REQUIRE(instance.add_request(make_spec(3, 100, 3), 0).rank == 0);
  FakeExecutor exec;
  double t = 0;
  // step 1: rank 0 = [1 prefill, 3 prefill], rank 1 = [2 prefill] (2 finishes: one output token)
  // step 2: rank 0 = [1 decode, 3 decode],   rank 1 = []
  t += test::step(instance, exec, t);
  t += test::step(instance, exec, t);
  REQUIRE(exec.history.size() == 2);
  CHECK(exec.history[0].ranks.size() == 2);
  CHECK(exec.history[0].ranks[1].entries.size() == 1);
  CHECK(exec.history[1].ranks[0].decode_requests() == 2);
  CHECK(exec.history[1].ranks[1].empty());
  CHECK(exec.history[1].ranks[1].rank == 1);
  CHECK(exec.history[1].step_index == 1);
  require_check(instance);
}

TEST_CASE("Rank assignment: least loaded and prefix aware", "[core][instance]") {
  InstanceConfig config = make_config(1024);
  config.dp_ranks = 2;
  config.assignment = PlacementPolicy::kLeastLoad;
  Instance loaded(config);
  CHECK(loaded.add_request(make_spec(1, 5000, 10), 0).rank == 0);
  CHECK(loaded.add_request(make_spec(2, 100, 10), 0).rank == 1);
  CHECK(loaded.add_request(make_spec(3, 100, 10), 0).rank == 1);  // rank 1 holds 220 tokens, rank 0 5,010

  config.assignment = PlacementPolicy::kPrefixAware;
  Instance aware(config);
  FakeExecutor exec;
  double t = 0;
  CHECK(aware.add_request(make_spec(1, 5000, 1), t).rank == 0);
  CHECK(aware.add_request(make_spec(2, 1024, 1, {7, 8}), t).rank == 1);  // least loaded: no hit anywhere
  while (aware.has_work()) t += test::step(aware, exec, t);
  // Rank 1 caches blocks 7,8; rank 0 is now the less loaded (both empty: the lowest), but the hit wins.
  CHECK(aware.add_request(make_spec(3, 1024, 1, {7, 8}), t).rank == 1);
  CHECK(aware.add_request(make_spec(4, 1024, 1, {5, 6}), t).rank == 0);
}

TEST_CASE(
    "PD hooks: a prefill-only instance hands off after the last chunk, a decode-only one admits with KV",
    "[core][instance]") {
  InstanceConfig prefill_config = make_config(1024);
  prefill_config.scheduler.role = InstanceRole::kPrefillOnly;
  Instance prefill(prefill_config);
  InstanceConfig decode_config = make_config(1024);
  decode_config.scheduler.role = InstanceRole::kDecodeOnly;
  Instance decode(decode_config);
  FakeExecutor exec;
  double t = 0;
  REQUIRE(prefill.add_request(make_spec(1, 40000, 5), t).accepted());
  // t=0..1: chunk [0,32768); t=1..2: chunk [32768,40000) samples the first token -> handed off at t=2.
  while (prefill.has_work()) t += test::step(prefill, exec, t);
  std::vector<RequestRecord> out;
  prefill.drain(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == RequestStatus::kHandedOff);
  CHECK(out[0].generated_tokens == 1);
  CHECK(out[0].first_token_s == Approx(2.0));
  CHECK(prefill.counters().kv.owned_pages == 0);

  const double kv_arrival_s = t;
  REQUIRE(decode.add_request_with_kv(make_spec(1, 40000, 5), t).accepted());
  const StepPlan p = decode.plan();
  REQUIRE(p.batches.ranks[0].entries.size() == 1);
  CHECK(p.batches.ranks[0].entries[0].phase == Phase::kDecode);
  CHECK(p.batches.ranks[0].entries[0].context_tokens == 40000);
  while (decode.has_work()) t += test::step(decode, exec, t);
  out.clear();
  decode.drain(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == RequestStatus::kFinished);
  CHECK(out[0].generated_tokens == 5);
  // The prefill's token reaches the client with the first decode step (t=2..3), together with that
  // step's token, not on the KV's arrival at t=2.
  CHECK(out[0].first_token_s == Approx(kv_arrival_s + 1.0));
  REQUIRE(out[0].token_times_s.size() == 5);
  CHECK(out[0].token_times_s[1] == Approx(kv_arrival_s + 1.0));
  CHECK(out[0].token_times_s[4] == Approx(kv_arrival_s + 4.0));
  CHECK(out[0].finish_s == Approx(kv_arrival_s + 4.0));
  // A one-token request never decodes: its token is streamed, and it is done, on arrival.
  REQUIRE(decode.add_request_with_kv(make_spec(3, 100, 1), t).accepted());
  out.clear();
  decode.drain(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == RequestStatus::kFinished);
  CHECK(out[0].first_token_s == Approx(t));
  CHECK(out[0].token_times_s.size() == 1);
  CHECK(decode.add_request(make_spec(2, 100, 5), t).reason == RejectReason::kWrongRole);
  require_check(decode);
}

TEST_CASE("Counters report queue, KV usage and batch tokens", "[core][instance]") {
  Instance instance(make_config(64));
  REQUIRE(instance.add_request(make_spec(1, 10 * kPage, 3), 0).accepted());
  REQUIRE(instance.add_request(make_spec(2, 5 * kPage, 3), 0).accepted());
  InstanceCounters c = instance.counters();
  CHECK(c.waiting == 2);
  CHECK(c.running == 0);
  FakeExecutor exec;
  test::step(instance, exec, 0);
  c = instance.counters();
  CHECK(c.waiting == 0);
  CHECK(c.decoding == 2);
  CHECK(c.last_batch_tokens == 15 * kPage);
  CHECK(c.kv.used_pages == 15);
  CHECK(c.kv.total_pages == 64);
}

TEST_CASE("Same arrivals and step durations give identical records (decisions are deterministic)",
          "[core][instance]") {
  auto run = [] {
    InstanceConfig config = make_config(96);
    config.dp_ranks = 2;
    config.assignment = PlacementPolicy::kPrefixAware;
    config.scheduler.policy = SchedulePolicy::kLongestPrefixMatch;
    config.scheduler.mtp_draft_tokens = 1;
    Instance instance(config);
    FakeExecutor exec;
    exec.accept = 1;
    exec.per_token_s = 1e-4;
    double t = 0;
    std::vector<RequestRecord> out;
    for (RequestId id = 0; id < 60; ++id) {
      const uint64_t family = static_cast<uint64_t>(id % 3);
      instance.add_request(make_spec(id, 300 + 37 * (id % 11), 5 + id % 17,
                                     {family, family + 10, 1000 + static_cast<uint64_t>(id)}),
                           t);
      t += test::step(instance, exec, t);
    }
    while (instance.has_work()) t += test::step(instance, exec, t);
    instance.drain(out);
    return out;
  };
  const std::vector<RequestRecord> a = run();
  const std::vector<RequestRecord> b = run();
  REQUIRE(a.size() == 60);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].rank == b[i].rank);
    CHECK(a[i].cached_tokens == b[i].cached_tokens);
    CHECK(a[i].token_times_s == b[i].token_times_s);
  }
}

TEST_CASE("abort ends a waiting or running request between steps, frees its pages and keeps check green",
          "[core][instance]") {
  constexpr int64_t kPool = 64;
  InstanceConfig config = make_config(kPool);
  config.scheduler.max_running_requests = 2;  // the third request waits
  Instance instance(config);
  REQUIRE(instance.add_request(make_spec(1, 300, 50), 0).accepted());
  REQUIRE(instance.add_request(make_spec(2, 300, 50), 0).accepted());
  REQUIRE(instance.add_request(make_spec(3, 300, 50), 0).accepted());
  FakeExecutor exec;
  double t = 0;
  t += test::step(instance, exec, t);  // 1 and 2 prefill; 3 waits (max running)
  t += test::step(instance, exec, t);  // a decode
  require_check(instance);
  const int64_t used_before = instance.counters().kv.used_pages;
  REQUIRE(used_before > 0);
  CHECK(instance.abort(3, RequestStatus::kCancelled, t));  // waiting: holds no pages
  CHECK(instance.abort(1, RequestStatus::kCancelled, t));  // running: its pages go back
  CHECK_FALSE(instance.abort(1, RequestStatus::kCancelled, t));
  CHECK_FALSE(instance.abort(99, RequestStatus::kCancelled, t));
  require_check(instance);
  CHECK(instance.counters().kv.used_pages < used_before);
  CHECK(instance.abort(2, RequestStatus::kFinished, t));  // a stop condition: finished early
  require_check(instance);
  CHECK(instance.counters().kv.used_pages == 0);
  CHECK_FALSE(instance.has_work());
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.size() == 3);
  CHECK(out[0].id == 3);
  CHECK(out[0].status == RequestStatus::kCancelled);
  CHECK(out[0].generated_tokens == 0);
  CHECK(out[1].id == 1);
  CHECK(out[1].status == RequestStatus::kCancelled);
  CHECK(out[1].generated_tokens == 2);
  CHECK(out[2].status == RequestStatus::kFinished);
  CHECK(out[2].generated_tokens < out[2].output_tokens);
  CHECK(instance.counters().finished == 1);  // a cancellation is not a completion
  CHECK(to_string(RequestStatus::kCancelled) == "cancelled");
}

}  // namespace tokenline
