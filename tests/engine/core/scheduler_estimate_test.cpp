// ReservationPolicy::kEstimate (SGLang's admission on an estimate, retraction, new_token_ratio) and the
// no-mixed step rule, on small cases with a fake executor, and a randomized property run.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <pcg_random.hpp>

#include "engine/core/instance.h"
#include "tests/engine/core/core_test_util.h"
#include "tests/engine/core/fake_executor.h"

namespace tokenline {

using test::FakeExecutor;
using test::kPage;
using test::make_spec;
using test::require_check;

namespace {

constexpr int64_t kPrompt = 256;   // 4 pages
constexpr int64_t kOutput = 1000;  // 16 pages more

InstanceConfig estimate_config(int64_t pages, double ratio) {
  InstanceConfig c = test::make_config(pages, ReservationPolicy::kEstimate);
  c.scheduler.mixed_batches = false;  // SGLang: a prefill step carries no decodes
  c.scheduler.solo_prefill_ratio = 0;
  c.scheduler.estimate = EstimateConfig{.init_ratio = ratio,
                                        .min_ratio = ratio,
                                        .ratio_decay = 0,
                                        .retract_headroom_tokens = 20,
                                        .clip_output_tokens = 4096};
  return c;
}

// Runs to idle, checking invariants after every step; returns the records by id.
std::map<RequestId, RequestRecord> run(Instance& instance, FakeExecutor& exec) {
  double t = 0;
  int64_t steps = 0;
  while (instance.has_work() && steps++ < 100000) {
    t += test::step(instance, exec, t);
    require_check(instance);
  }
  REQUIRE_FALSE(instance.has_work());
  std::vector<RequestRecord> out;
  instance.drain(out);
  std::map<RequestId, RequestRecord> by_id;
  for (RequestRecord& r : out) by_id[r.id] = std::move(r);
  return by_id;
}

bool has_prefill(const Batch& b) {
  return b.prefill_tokens() > 0;
}

}  // namespace

TEST_CASE("Estimate admission: prompt + output must fit the free tokens less the running estimate",
          "[core][scheduler][estimate]") {
  // 40 pages = 2,560 tokens. Each request asks 256 + 1,000 = 1,256.
  // step 1: A fits (2,560 -> 1,304 after its charge), B fits (-> 48), C stops on kKvEstimate.
  // step 2: 32 free pages = 2,048 tokens less 2 x 0.1 x 999 running = 1,848: C is admitted alone.
  Instance instance(estimate_config(40, 0.1));
  for (RequestId id = 1; id <= 3; ++id)
    REQUIRE(instance.add_request(make_spec(id, kPrompt, kOutput), 0).accepted());
  StepPlan p = instance.plan();
  CHECK(p.ranks[0].admissions.size() == 2);
  CHECK(p.ranks[0].stop == StopReason::kKvEstimate);
  FakeExecutor exec;
  instance.commit(p, exec.execute(p.batches), 1);
  p = instance.plan();
  REQUIRE(p.batches.ranks[0].entries.size() == 1);
  CHECK(p.batches.ranks[0].entries[0].id == 3);
  CHECK(p.batches.ranks[0].decode_requests() == 0);  // no-mixed: A and B wait this step
}

TEST_CASE("Retraction: KV runs out in decode, the newest decode is retracted, finishes later, nothing lost",
          "[core][scheduler][estimate]") {
  // A low ratio (0.1) admits four 1,256-token requests into 40 pages (2,560 tokens) over steps 1-3; in
  // decode they grow a page every 64 tokens and the pool runs dry near 384 tokens each. The decode that
  // has generated least (D, admitted last) is retracted, recomputes prompt + generated later and finishes
  // after the others. With 200 pages nobody is retracted and D finishes earlier.
  auto run_with = [](int64_t pages) {
    Instance instance(estimate_config(pages, 0.1));
    for (RequestId id = 1; id <= 4; ++id)
      REQUIRE(instance.add_request(make_spec(id, kPrompt, kOutput), 0).accepted());
    FakeExecutor exec;
    auto records = run(instance, exec);
    return std::make_tuple(records, instance.counters(), exec.history);
  };
  const auto [tight, tight_counters, history] = run_with(40);
  const auto [roomy, roomy_counters, unused] = run_with(200);
  CHECK(roomy_counters.retractions == 0);
  REQUIRE(tight_counters.retractions > 0);
  CHECK(tight_counters.preemptions >= tight_counters.retractions);
  CHECK(tight_counters.stop_counts[static_cast<int>(StopReason::kRetracted)] > 0);
  int64_t retractions = 0;
  for (const auto& [id, r] : tight) {
    INFO("request " << id);
    CHECK(r.status == RequestStatus::kFinished);
    CHECK(r.generated_tokens == kOutput);
    CHECK(static_cast<int64_t>(r.token_times_s.size()) == kOutput);
    CHECK(r.preemptions >= r.retractions);
    retractions += r.retractions;
  }
  CHECK(retractions == tight_counters.retractions);
  REQUIRE(tight.at(4).retractions > 0);
  CHECK(tight.at(1).retractions == 0);  // the oldest decode is never the victim
  CHECK(tight.at(4).finish_s > roomy.at(4).finish_s);
  // D came back as a prefill of its prompt plus the tokens it had generated.
  bool recomputed = false;
  for (const StepBatches& s : history)
    for (const BatchEntry& e : s.ranks[0].entries)
      recomputed |= e.id == 4 && e.phase == Phase::kPrefill && e.context_tokens + e.new_tokens > kPrompt;
  CHECK(recomputed);
}

TEST_CASE("Retraction order: fewest generated first, then the longest prompt",
          "[core][scheduler][estimate]") {
  // Three requests admitted in one step (outputs clipped to 50 in the estimate), prompts 128 / 320 / 192
  // (10 of 24 pages); they decode in step with equal generated counts until the pool runs dry near 300
  // tokens each. The first retraction must take the 320-token prompt.
  InstanceConfig c = estimate_config(24, 0.05);
  c.scheduler.estimate.clip_output_tokens = 50;
  Instance instance(c);
  REQUIRE(instance.add_request(make_spec(1, 128, 600), 0).accepted());
  REQUIRE(instance.add_request(make_spec(2, 320, 600), 0).accepted());
  REQUIRE(instance.add_request(make_spec(3, 192, 600), 0).accepted());
  REQUIRE(instance.plan().ranks[0].admissions.size() == 3);
  FakeExecutor exec;
  double t = 0;
  for (int step = 0; step < 2000; ++step) {
    const StepPlan p = instance.plan();
    if (!p.ranks[0].retractions.empty()) {
      CHECK(instance.rank(0).request(p.ranks[0].retractions[0]).record.id == 2);
      return;
    }
    instance.commit(p, exec.execute(p.batches), t += 1);
    require_check(instance);
  }
  FAIL("no retraction happened");
}

TEST_CASE("new_token_ratio decays per decode step to its floor and restarts after a retraction",
          "[core][scheduler][estimate]") {
  InstanceConfig c = test::make_config(1000, ReservationPolicy::kEstimate);
  c.scheduler.mixed_batches = false;
  c.scheduler.estimate = EstimateConfig{.init_ratio = 0.7,
                                        .min_ratio = 0.098,
                                        .ratio_decay = 0.1,
                                        .retract_headroom_tokens = 20,
                                        .clip_output_tokens = 4096};
  Instance instance(c);
  REQUIRE(instance.add_request(make_spec(1, 100, 50), 0).accepted());
  FakeExecutor exec;
  double t = 0;
  t += test::step(instance, exec, t);  // prefill: no decay
  CHECK(instance.rank(0).new_token_ratio() == Approx(0.7));
  t += test::step(instance, exec, t);  // decode 1
  CHECK(instance.rank(0).new_token_ratio() == Approx(0.6));
  for (int i = 0; i < 10; ++i) t += test::step(instance, exec, t);
  CHECK(instance.rank(0).new_token_ratio() == Approx(0.098));
}

TEST_CASE("No-mixed steps carry no decodes beside prefill work, whatever the reservation",
          "[core][scheduler]") {
  // Eight 300-token requests with 200-token outputs arrive one per step into 40 pages with a 256-token
  // budget: prompts take two chunks, so prefills overlap running decodes; no step may hold both.
  for (ReservationPolicy policy :
       {ReservationPolicy::kWholeRequest, ReservationPolicy::kIncremental, ReservationPolicy::kEstimate}) {
    InstanceConfig c = test::make_config(40, policy);
    c.scheduler.mixed_batches = false;
    c.scheduler.max_batch_tokens = 256;
    Instance instance(c);
    FakeExecutor exec;
    double t = 0;
    int64_t prefill_steps = 0;
    int64_t decode_steps = 0;
    for (RequestId id = 0; id < 8 || instance.has_work(); ++id) {
      REQUIRE(id < 10000);
      if (id < 8) REQUIRE(instance.add_request(make_spec(id, 300, 200), t).accepted());
      const double d = test::step(instance, exec, t);
      t += d;
      require_check(instance);
      if (d == 0) continue;
      const Batch& b = exec.history.back().ranks[0];
      REQUIRE((!has_prefill(b) || b.decode_requests() == 0));
      prefill_steps += has_prefill(b) ? 1 : 0;
      decode_steps += b.decode_requests() > 0 ? 1 : 0;
    }
    CHECK(instance.counters().finished == 8);
    CHECK(prefill_steps > 0);
    CHECK(decode_steps > 0);
  }
}

TEST_CASE(
    "Randomized: estimate admission with retraction keeps every invariant, no-mixed steps hold no decodes",
    "[core][property][estimate]") {
  const char* env = std::getenv("TOKENLINE_SEED");
  const uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 10) : 20261201;
  INFO("seed " << seed << " (replay: TOKENLINE_SEED=" << seed << ")");
  pcg32 rng(seed);
  auto uniform = [&rng](int64_t lo, int64_t hi) { return lo + int64_t(rng(uint32_t(hi - lo + 1))); };
  int64_t retractions = 0;
  for (int round = 0; round < 12; ++round) {
    InstanceConfig c = test::make_config(uniform(24, 120), ReservationPolicy::kEstimate);
    c.dp_ranks = int32_t(uniform(1, 2));
    c.kv.prefix_cache = uniform(0, 1) == 1;
    c.scheduler.mixed_batches = uniform(0, 2) == 0;
    c.scheduler.max_batch_tokens = uniform(64, 1024);
    c.scheduler.max_running_requests = int32_t(uniform(2, 32));
    c.scheduler.mtp_draft_tokens = int32_t(uniform(0, 2));
    c.scheduler.max_context_tokens = 4096;
    const double ratio = double(uniform(2, 70)) / 100;
    c.scheduler.estimate = EstimateConfig{.init_ratio = ratio,
                                          .min_ratio = ratio / 4,
                                          .ratio_decay = double(uniform(0, 20)) / 1000,
                                          .retract_headroom_tokens = int32_t(uniform(0, 40)),
                                          .clip_output_tokens = uniform(100, 4096)};
    INFO("round " << round << " pages " << c.kv.total_pages << " mixed " << c.scheduler.mixed_batches);
    Instance instance(c);
    FakeExecutor exec;
    exec.accept = 1;
    double t = 0;
    RequestId next = 0;
    int64_t accepted = 0;
    std::vector<RequestRecord> records;
    for (int op = 0; op < 3000 || instance.has_work(); ++op) {
      REQUIRE(op < 400000);
      if (op < 3000 && uniform(0, 99) < 25) {
        const RequestSpec s = make_spec(next++, uniform(1, 900), uniform(1, 800));
        accepted += instance.add_request(s, t).accepted() ? 1 : 0;
        continue;
      }
      const StepPlan p = instance.plan();
      if (!c.scheduler.mixed_batches)
        for (const Batch& b : p.batches.ranks) REQUIRE((!has_prefill(b) || b.decode_requests() == 0));
      for (const RankDecision& d : p.ranks)  // drivers see every requeue in preemptions
        for (int32_t slot : d.retractions)
          REQUIRE(std::find(d.preemptions.begin(), d.preemptions.end(), slot) != d.preemptions.end());
      const StepOutcome o = exec.execute(p.batches);
      instance.commit(p, o, t += o.duration_s);
      require_check(instance);
      if (uniform(0, 9) == 0) instance.drain(records);
    }
    instance.drain(records);
    const InstanceCounters k = instance.counters();
    REQUIRE(k.finished == accepted);
    REQUIRE(k.kv.used_pages == 0);
    for (const RequestRecord& r : records)
      if (r.status == RequestStatus::kFinished) REQUIRE(r.generated_tokens == r.output_tokens);
    retractions += k.retractions;
  }
  CHECK(retractions > 0);  // the run exercised retraction
}

}  // namespace tokenline
