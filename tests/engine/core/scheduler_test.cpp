#include "engine/core/scheduler.h"

#include <catch2/catch.hpp>

#include "tests/engine/core/core_test_util.h"
#include "tests/engine/core/fake_executor.h"

namespace tokenline {

using test::FakeExecutor;
using test::kChunk;
using test::kMillion;
using test::kPage;
using test::make_config;
using test::make_spec;
using test::require_check;

namespace {
// Steps the instance until it has no work; returns the number of steps. Checks invariants every step.
int64_t run_to_idle(Instance& instance, FakeExecutor& exec, double& now_s, int64_t max_steps = 100000) {
  int64_t steps = 0;
  while (instance.has_work() && steps < max_steps) {
    now_s += test::step(instance, exec, now_s);
    require_check(instance);
    ++steps;
  }
  REQUIRE_FALSE(instance.has_work());
  return steps;
}
}  // namespace

TEST_CASE("A 1M-token prompt prefills in 32 chunks of 32K", "[core][scheduler]") {
  // step:        1          2                32        33
  // entry:   [0,32K)    [32K,64K)   ...  [992K,1M)   decode
  // KV pages:   512       1024            16384      16385
  // tokens:                               first(t=32) second(t=33) -> finished
  Instance instance(make_config(kMillion / kPage + 16));
  REQUIRE(instance.add_request(make_spec(1, kMillion, 2), 0.0).accepted());
  FakeExecutor exec;
  double now_s = 0;
  const int64_t steps = run_to_idle(instance, exec, now_s);
  const int64_t chunks = kMillion / kChunk;
  REQUIRE(chunks == 32);
  REQUIRE(steps == chunks + 1);
  for (int64_t k = 0; k < chunks; ++k) {
    const Batch& b = exec.history[static_cast<size_t>(k)].ranks[0];
    REQUIRE(b.entries.size() == 1);
    CHECK(b.entries[0].phase == Phase::kPrefill);
    CHECK(b.entries[0].new_tokens == kChunk);
    CHECK(b.entries[0].context_tokens == k * kChunk);
    CHECK(b.entries[0].last_chunk == (k == chunks - 1));
  }
  const BatchEntry& decode = exec.history.back().ranks[0].entries.at(0);
  CHECK(decode.phase == Phase::kDecode);
  CHECK(decode.context_tokens == kMillion);
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == RequestStatus::kFinished);
  CHECK(out[0].first_token_s == Approx(static_cast<double>(chunks)));
  CHECK(out[0].finish_s == Approx(static_cast<double>(chunks + 1)));
  CHECK(out[0].token_times_s.size() == 2);
  CHECK(instance.counters().kv.peak_used_pages == kMillion / kPage + 1);
}

TEST_CASE("A 20K prompt with a 19K cached prefix prefills 1K tokens after ~300 page-hash comparisons",
          "[core][scheduler][prefix]") {
  constexpr int64_t kBlock = 512;               // Mooncake hash_ids block
  constexpr int64_t kCachedTokens = 19 * 1024;  // "19K": 38 blocks, 304 pages
  constexpr int64_t kPromptTokens = 20 * 1024;  // "20K": 40 blocks, 320 pages
  std::vector<uint64_t> shared;
  for (uint64_t b = 0; b < kCachedTokens / kBlock; ++b) shared.push_back(1000 + b);
  std::vector<uint64_t> longer = shared;
  longer.push_back(7001);
  longer.push_back(7002);

  // t=0..1: A (19K) prefills in one step, samples its only token, finishes; its 304 pages stay cached.
  // t=1..2: B (20K) matches 304 pages (+1 missed lookup) and prefills only [19K, 20K).
  Instance instance(make_config(1024));
  FakeExecutor exec;
  double now_s = 0;
  REQUIRE(instance.add_request(make_spec(1, kCachedTokens, 1, shared), now_s).accepted());
  run_to_idle(instance, exec, now_s);
  const KvCounters before = instance.counters().kv;
  CHECK(before.cached_pages == kCachedTokens / kPage);
  CHECK(before.owned_pages == 0);

  REQUIRE(instance.add_request(make_spec(2, kPromptTokens, 1, longer), now_s).accepted());
  const StepPlan plan = instance.plan();
  const BatchEntry& e = plan.batches.ranks[0].entries.at(0);
  CHECK(e.context_tokens == kCachedTokens);
  CHECK(e.new_tokens == kPromptTokens - kCachedTokens);
  CHECK(plan.ranks[0].admissions.at(0).match.pages == kCachedTokens / kPage);
  run_to_idle(instance, exec, now_s);
  const KvCounters after = instance.counters().kv;
  const int64_t comparisons = after.hash_comparisons - before.hash_comparisons;
  CHECK(comparisons == kCachedTokens / kPage + 1);  // 304 hits and the lookup that missed
  CHECK(comparisons >= 290);
  CHECK(comparisons <= 310);
  CHECK(after.prefix_hit_tokens - before.prefix_hit_tokens == kCachedTokens);
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.size() == 2);
  CHECK(out[1].cached_tokens == kCachedTokens);
}

TEST_CASE("Preemption under KV pressure: victims recompute and every request finishes", "[core][scheduler]") {
  // 4 requests of 512 prompt + 400 output need 15 pages each at the end (60) from a 40-page pool.
  // step 1: all four prefill (32 pages); decode steps grow them; when the pool runs dry the newest
  // running request is preempted (recompute), requeued, and readmitted once others finish.
  constexpr int64_t kPool = 40;
  Instance instance(make_config(kPool));
  for (RequestId id = 0; id < 4; ++id) REQUIRE(instance.add_request(make_spec(id, 512, 400), 0.0).accepted());
  FakeExecutor exec;
  double now_s = 0;
  run_to_idle(instance, exec, now_s);
  const InstanceCounters c = instance.counters();
  CHECK(c.preemptions > 0);
  CHECK(c.finished == 4);
  CHECK(c.kv.peak_used_pages <= kPool);
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.size() == 4);
  int32_t preempted = 0;
  for (const RequestRecord& r : out) {
    CHECK(r.status == RequestStatus::kFinished);
    CHECK(r.generated_tokens == 400);
    CHECK(static_cast<int64_t>(r.token_times_s.size()) == 400);
    preempted += r.preemptions;
  }
  CHECK(preempted == c.preemptions);
  CHECK(c.stop_counts[static_cast<int>(StopReason::kPreempted)] > 0);
  // The oldest request is never a victim: it finishes first.
  CHECK(out[0].id == 0);
  CHECK(out[0].preemptions == 0);
}

TEST_CASE("Whole-request reservation admits fewer 1M requests into the same pool than incremental",
          "[core][scheduler]") {
  // Pool: 50,000 pages = 3.05 requests of 1M (16,384 pages each). Four 1M requests arrive at t=0;
  // long_prefill_token_threshold 8K lets four chunks share a step.
  //   whole-request:  step 1 admits 3 (3 x 16,384 pages reserved), the 4th stops on kKvPages
  //   incremental:    step 1 admits 4 (4 x 128 pages for the first 8K chunk each)
  constexpr int64_t kPool = 50000;
  constexpr int64_t kThreshold = 8192;
  auto first_step = [](Instance& instance) {
    for (RequestId id = 0; id < 4; ++id)
      REQUIRE(instance.add_request(make_spec(id, kMillion, 4), 0.0).accepted());
    return instance.plan();
  };
  InstanceConfig whole_config = make_config(kPool, ReservationPolicy::kWholeRequest);
  whole_config.scheduler.long_prefill_token_threshold = kThreshold;
  whole_config.scheduler.solo_prefill_ratio = 0;  // four 1M prefills would each dwarf the others
  InstanceConfig incr_config = make_config(kPool, ReservationPolicy::kIncremental);
  incr_config.scheduler.long_prefill_token_threshold = kThreshold;
  incr_config.scheduler.solo_prefill_ratio = 0;
  Instance whole(whole_config);
  Instance incremental(incr_config);
  const StepPlan pw = first_step(whole);
  const StepPlan pi = first_step(incremental);
  const int64_t pages_per_request = (kMillion + 4 - 1 + kPage - 1) / kPage;
  CHECK(static_cast<int64_t>(pw.ranks[0].admissions.size()) == kPool / pages_per_request);
  CHECK(pw.ranks[0].admissions.size() == 3);
  CHECK(pw.ranks[0].stop == StopReason::kKvPages);
  CHECK(pi.ranks[0].admissions.size() == 4);
  CHECK(pi.ranks[0].stop == StopReason::kQueueEmpty);

  // Both finish everything; incremental gets there through preemption once the pool fills.
  FakeExecutor exec;
  double t = 0;
  whole.commit(pw, exec.execute(pw.batches), t += 1);
  CHECK(whole.counters().kv.used_pages == 3 * pages_per_request);
  run_to_idle(whole, exec, t);
  t = 0;
  incremental.commit(pi, exec.execute(pi.batches), t += 1);
  CHECK(incremental.counters().kv.used_pages == 4 * (kThreshold / kPage));
  run_to_idle(incremental, exec, t);
  CHECK(whole.counters().finished == 4);
  CHECK(whole.counters().preemptions == 0);
  CHECK(incremental.counters().finished == 4);
  CHECK(incremental.counters().preemptions > 0);
}

TEST_CASE("Mixed batches put decodes and a prefill chunk in one step, SGLang alternation splits them",
          "[core][scheduler]") {
  // t=0: A, B (100 tokens each) prefill together; t=1: A, B decode;
  // C (1,000 tokens) arrives at t=2.
  //   mixed:       step 3 = [A decode, B decode, C prefill 1000]
  //   alternating: step 3 = [C prefill 1000], step 4 = [A, B, C decode]
  for (bool mixed : {true, false}) {
    InstanceConfig config = make_config(256);
    config.scheduler.mixed_batches = mixed;
    Instance instance(config);
    FakeExecutor exec;
    double t = 0;
    REQUIRE(instance.add_request(make_spec(1, 100, 10), t).accepted());
    REQUIRE(instance.add_request(make_spec(2, 100, 10), t).accepted());
    t += test::step(instance, exec, t);
    t += test::step(instance, exec, t);
    REQUIRE(instance.add_request(make_spec(3, 1000, 10), t).accepted());
    t += test::step(instance, exec, t);
    const Batch& b3 = exec.history.back().ranks[0];
    if (mixed) {
      REQUIRE(b3.entries.size() == 3);
      CHECK(b3.decode_requests() == 2);
      CHECK(b3.prefill_tokens() == 1000);
    } else {
      REQUIRE(b3.entries.size() == 1);
      CHECK(b3.prefill_tokens() == 1000);
      t += test::step(instance, exec, t);
      const Batch& b4 = exec.history.back().ranks[0];
      CHECK(b4.decode_requests() == 3);
      CHECK(b4.prefill_tokens() == 0);
    }
    run_to_idle(instance, exec, t);
    CHECK(instance.counters().finished == 3);
  }
}

TEST_CASE("A 1M prefill arriving among decodes runs alone (the seed's rule), then mixing resumes",
          "[core][scheduler]") {
  // t=0..1: 4 short requests prefill; t=1..2 they decode (4 tokens per step).
  // t=2: a 1M prompt arrives: 1M remaining >= 32 x 4 others -> the step runs the long chunk alone
  //      (kLongPrefillAlone); the four decodes wait, and so on until its remainder no longer dwarfs them.
  InstanceConfig config = make_config(kMillion / kPage + 256);
  Instance instance(config);
  FakeExecutor exec;
  double t = 0;
  for (RequestId id = 0; id < 4; ++id) REQUIRE(instance.add_request(make_spec(id, 64, 200), t).accepted());
  t += test::step(instance, exec, t);
  t += test::step(instance, exec, t);
  REQUIRE(instance.add_request(make_spec(9, kMillion, 2), t).accepted());
  const StepPlan p = instance.plan();
  REQUIRE(p.batches.ranks[0].entries.size() == 1);
  CHECK(p.batches.ranks[0].entries[0].id == 9);
  CHECK(p.batches.ranks[0].entries[0].new_tokens == kChunk);
  CHECK(p.ranks[0].stop == StopReason::kLongPrefillAlone);
  run_to_idle(instance, exec, t);
  // Once the remainder is below 32 x (the 4 decodes + ...), the steps mix again: some step holds both.
  bool mixed_seen = false;
  for (const StepBatches& s : exec.history)
    mixed_seen |= s.ranks[0].prefill_tokens() > 0 && s.ranks[0].decode_requests() > 0;
  CHECK(mixed_seen);
  CHECK(instance.counters().finished == 5);
}

TEST_CASE("Every StopReason is reached", "[core][scheduler]") {
  FakeExecutor exec;
  SECTION("kQueueEmpty and kTokenBudget") {
    // Three 20K prompts, 32K budget: step 1 = [A 20K, B 12K] -> budget spent with C waiting.
    Instance instance(make_config(4096));
    for (RequestId id = 0; id < 3; ++id) REQUIRE(instance.add_request(make_spec(id, 20000, 1), 0).accepted());
    StepPlan p = instance.plan();
    CHECK(p.ranks[0].stop == StopReason::kTokenBudget);
    CHECK(p.batches.ranks[0].entries.size() == 2);
    CHECK(p.batches.ranks[0].entries[1].new_tokens == kChunk - 20000);
    instance.commit(p, exec.execute(p.batches), 1);
    p = instance.plan();
    CHECK(p.ranks[0].stop == StopReason::kQueueEmpty);
  }
  SECTION("kMaxRunning") {
    InstanceConfig config = make_config(4096);
    config.scheduler.max_running_requests = 2;
    Instance instance(config);
    for (RequestId id = 0; id < 3; ++id) REQUIRE(instance.add_request(make_spec(id, 100, 1), 0).accepted());
    const StepPlan p = instance.plan();
    CHECK(p.ranks[0].stop == StopReason::kMaxRunning);
    CHECK(p.ranks[0].admissions.size() == 2);
  }
  SECTION("kKvPages") {
    // 10 pages: A (5 pages incl. output) fits, B (6 more) does not.
    Instance instance(make_config(10, ReservationPolicy::kWholeRequest));
    REQUIRE(instance.add_request(make_spec(1, 4 * kPage, kPage), 0).accepted());
    REQUIRE(instance.add_request(make_spec(2, 5 * kPage, kPage), 0).accepted());
    const StepPlan p = instance.plan();
    CHECK(p.ranks[0].stop == StopReason::kKvPages);
    CHECK(p.ranks[0].admissions.size() == 1);
  }
  SECTION("kLongPrefillAlone and kPreempted") {
    // Covered with their timelines above; here the preempting step itself: two decoders in a pool
    // with no page left, the newer one is preempted and nothing is admitted.
    Instance instance(make_config(2));
    REQUIRE(instance.add_request(make_spec(1, kPage, 2), 0).accepted());
    REQUIRE(instance.add_request(make_spec(2, kPage, 2), 0).accepted());
    REQUIRE(instance.add_request(make_spec(3, 10, 1), 0).accepted());
    StepPlan p = instance.plan();  // both prefill one page each; the third waits on pages
    CHECK(p.ranks[0].stop == StopReason::kKvPages);
    instance.commit(p, exec.execute(p.batches), 1);
    p = instance.plan();  // both decoders need a second page: request 2 is preempted for request 1
    CHECK(p.ranks[0].preemptions == std::vector<int32_t>{1});
    CHECK(p.ranks[0].stop == StopReason::kPreempted);
    CHECK(p.batches.ranks[0].entries.size() == 1);
    instance.commit(p, exec.execute(p.batches), 2);
    require_check(instance);
  }
}

TEST_CASE("MTP: each decode step verifies k drafts and commits 1 + accepted tokens", "[core][scheduler]") {
  // k=2, 1 accepted per step: prefill -> token 1; decodes -> 3, 5, 7 (the last verifies 1 draft only).
  InstanceConfig config = make_config(64);
  config.scheduler.mtp_draft_tokens = 2;
  Instance instance(config);
  FakeExecutor exec;
  exec.accept = 1;
  double t = 0;
  REQUIRE(instance.add_request(make_spec(1, 100, 7), t).accepted());
  const int64_t steps = run_to_idle(instance, exec, t);
  CHECK(steps == 4);
  CHECK(exec.history[1].ranks[0].entries[0].draft_tokens == 2);
  CHECK(exec.history[3].ranks[0].entries[0].draft_tokens == 1);
  std::vector<RequestRecord> out;
  instance.drain(out);
  REQUIRE(out.at(0).generated_tokens == 7);
  CHECK(out[0].token_times_s == std::vector<double>{1, 2, 2, 3, 3, 4, 4});
}

TEST_CASE("Priority policy serves the most urgent (largest priority) first and preempts the least urgent",
          "[core][scheduler]") {
  InstanceConfig config = make_config(4096);
  config.scheduler.policy = SchedulePolicy::kPriority;
  config.scheduler.max_running_requests = 1;
  Instance instance(config);
  RequestSpec low = make_spec(1, 100, 1);
  low.priority = -1;
  RequestSpec high = make_spec(2, 100, 1);
  high.priority = 5;
  REQUIRE(instance.add_request(low, 0).accepted());
  REQUIRE(instance.add_request(high, 0).accepted());
  const StepPlan p = instance.plan();
  REQUIRE(p.batches.ranks[0].entries.size() == 1);
  CHECK(p.batches.ranks[0].entries[0].id == 2);
}

TEST_CASE("Longest-prefix-match policy admits the request with the longest cached prefix first",
          "[core][scheduler][prefix]") {
  InstanceConfig config = make_config(4096);
  config.scheduler.policy = SchedulePolicy::kLongestPrefixMatch;
  config.scheduler.max_running_requests = 1;
  Instance instance(config);
  FakeExecutor exec;
  double t = 0;
  REQUIRE(instance.add_request(make_spec(1, 2048, 1, {1, 2, 3, 4}), t).accepted());
  run_to_idle(instance, exec, t);
  REQUIRE(instance.add_request(make_spec(2, 2048, 1, {9, 9, 9, 9}), t).accepted());  // no hit, arrived first
  REQUIRE(instance.add_request(make_spec(3, 2048, 1, {1, 2, 3, 5}), t).accepted());  // 3 blocks hit
  const StepPlan p = instance.plan();
  REQUIRE(p.batches.ranks[0].entries.size() == 1);
  CHECK(p.batches.ranks[0].entries[0].id == 3);
  CHECK(p.batches.ranks[0].entries[0].context_tokens == 3 * 512);
}

TEST_CASE("Finished prompts stay cached until new work needs their pages, then go LRU first",
          "[core][scheduler][prefix]") {
  // Pool of 32 pages. t=0..1: A (8 pages of prompt, token ids) finishes -> 8 cached pages.
  // t=1..2: B (8 pages, different ids) finishes -> 16 cached. t=2: C (24-page prompt) needs 24 pages:
  // 16 free + 8 evicted, A's (least recently used) first; B's prompt still hits afterwards.
  constexpr int64_t kPool = 32;
  auto ids = [](int32_t base, int64_t n) {
    std::vector<int32_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(base + static_cast<int32_t>(i));
    return v;
  };
  Instance instance(make_config(kPool));
  FakeExecutor exec;
  double t = 0;
  RequestSpec a = make_spec(1, 8 * kPage, 1);
  a.token_ids = ids(0, a.prompt_tokens);
  RequestSpec b = make_spec(2, 8 * kPage, 1);
  b.token_ids = ids(100000, b.prompt_tokens);
  RequestSpec c = make_spec(3, 24 * kPage, 1);
  c.token_ids = ids(200000, c.prompt_tokens);
  REQUIRE(instance.add_request(a, t).accepted());
  run_to_idle(instance, exec, t);
  REQUIRE(instance.add_request(b, t).accepted());
  run_to_idle(instance, exec, t);
  CHECK(instance.counters().kv.cached_pages == 16);
  CHECK(instance.counters().kv.evictable_pages == 16);
  REQUIRE(instance.add_request(c, t).accepted());
  run_to_idle(instance, exec, t);
  CHECK(instance.counters().kv.evicted_pages == 8);
  // B's prompt is still there (a hit of its 7 matchable pages); A's is gone.
  RequestSpec b2 = b;
  b2.id = 4;
  RequestSpec a2 = a;
  a2.id = 5;
  const int64_t hits_before = instance.counters().kv.prefix_hit_tokens;
  REQUIRE(instance.add_request(b2, t).accepted());
  run_to_idle(instance, exec, t);
  CHECK(instance.counters().kv.prefix_hit_tokens - hits_before == 7 * kPage);
  REQUIRE(instance.add_request(a2, t).accepted());
  run_to_idle(instance, exec, t);
  CHECK(instance.counters().kv.prefix_hit_tokens - hits_before == 7 * kPage);
}

TEST_CASE("Whole-request reservation holds a 1M request's ~57 GB from its first chunk, incremental grows",
          "[core][scheduler]") {
  // GLM-5.3, fp8_ds_mla (the seed): 656 B/token/layer x 78 layers main KV + 132 B/token/layer x 21
  // indexer layers, per 64-token page.
  constexpr int64_t kMainBytesPerPage = 656 * 78 * kPage;
  constexpr int64_t kIndexerBytesPerPage = 132 * 21 * kPage;
  constexpr double kSeedGigabytes = 56.6;  // "57 GB": 53.7 GB main + 2.9 GB indexer
  for (ReservationPolicy policy : {ReservationPolicy::kWholeRequest, ReservationPolicy::kIncremental}) {
    InstanceConfig config = make_config(kMillion / kPage + 1, policy);
    config.kv.main_bytes_per_page = kMainBytesPerPage;
    config.kv.indexer_bytes_per_page = kIndexerBytesPerPage;
    Instance instance(config);
    REQUIRE(instance.add_request(make_spec(1, kMillion, 1), 0).accepted());
    FakeExecutor exec;
    test::step(instance, exec, 0);  // t=0..1: the first 32K chunk
    const KvCounters kv = instance.counters().kv;
    const double gigabytes = static_cast<double>(kv.used_main_bytes + kv.used_indexer_bytes) / 1e9;
    if (policy == ReservationPolicy::kWholeRequest) {
      CHECK(kv.used_pages == kMillion / kPage);
      CHECK(gigabytes == Approx(kSeedGigabytes).margin(0.1));
    } else {
      CHECK(kv.used_pages == kChunk / kPage);
      CHECK(gigabytes == Approx(kSeedGigabytes / 32).margin(0.01));
    }
  }
}

}  // namespace tokenline
