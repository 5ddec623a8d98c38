#include "engine/runtime/engine_loop.h"

#include <catch2/catch.hpp>
#include <map>

#include "engine/runtime/page_preview.h"
#include "tests/engine/runtime/fake_clock.h"

using namespace tokenline;

namespace {

constexpr int32_t kPageTokens = 16;

InstanceConfig small_instance(int64_t pages, ReservationPolicy reservation) {
  InstanceConfig c;
  c.scheduler.max_batch_tokens = 64;
  c.scheduler.max_running_requests = 16;
  c.scheduler.max_context_tokens = 4096;
  c.kv.page_tokens = kPageTokens;
  c.kv.total_pages = pages;
  c.kv.reservation = reservation;
  return c;
}

// 12 requests at time 0, in 3 prefix groups (two shared 16-token blocks each), prompts 40..62 tokens.
std::vector<TimedRequest> workload() {
  std::vector<TimedRequest> out;
  for (int i = 0; i < 12; ++i) {
    TimedRequest t;
    t.arrival_s = 0;
    t.spec.id = i;
    t.spec.prompt_tokens = 40 + 2 * i;
    t.spec.output_tokens = 10 + i % 4;
    t.spec.block_tokens = kPageTokens;
    const int64_t blocks = (t.spec.prompt_tokens + kPageTokens - 1) / kPageTokens;
    for (int64_t b = 0; b < blocks; ++b)
      t.spec.block_hashes.push_back(b < 2 ? static_cast<uint64_t>(100 * (i % 3) + b) : 10000 + 100 * i + b);
    out.push_back(t);
  }
  return out;
}

struct Collect final : EngineObserver {
  std::vector<RequestRecord> records;
  std::vector<double> step_durations;
  int64_t preemptions = 0;
  void on_arrival(RequestId, double) override {}
  void on_preemption(RequestId, double) override { ++preemptions; }
  void on_step(const StepPlan&, const StepOutcome& o, double, const InstanceCounters&) override {
    step_durations.push_back(o.duration_s);
  }
  void on_record(const RequestRecord& r) override { records.push_back(r); }
};

ModelRunner make_runner(Clock& clock, int64_t pages) {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  return ModelRunner(shape, ModelWeights::random(shape, 5),
                     RunnerConfig{.dp_ranks = 1, .total_pages = pages, .page_tokens = kPageTokens}, clock);
}

}  // namespace

TEST_CASE("engine loop: every request completes; a fake clock makes the whole run deterministic") {
  const std::vector<TimedRequest> arrivals = workload();
  auto run = [&](Collect& c) {
    test::FakeClock clock(1e-5);
    ModelRunner runner = make_runner(clock, 12);
    Instance instance(small_instance(12, ReservationPolicy::kIncremental));
    const EngineLoopResult r = run_engine_loop(instance, runner, clock, arrivals, 9, c);
    std::string why;
    CHECK(instance.check(&why));
    return r;
  };
  Collect a, b;
  const EngineLoopResult ra = run(a), rb = run(b);
  REQUIRE(a.records.size() == arrivals.size());
  int64_t generated = 0, cached = 0;
  for (const RequestRecord& r : a.records) {
    CHECK(r.status == RequestStatus::kFinished);
    generated += r.generated_tokens;
    cached += r.cached_tokens;
  }
  int64_t wanted = 0;
  for (const TimedRequest& t : arrivals) wanted += t.spec.output_tokens;
  CHECK(generated == wanted);
  CHECK(cached > 0);         // the prefix groups hit
  CHECK(a.preemptions > 0);  // 12 pages of 16 tokens cannot hold the burst
  CHECK(ra.steps == rb.steps);
  CHECK(a.step_durations == b.step_durations);
  CHECK(ra.end_s == rb.end_s);
}

// Keeps each finished request's tokens (prompt + generated), read from the runner before it forgets them.
struct Tokens final : EngineObserver {
  const ModelRunner* runner = nullptr;
  std::map<RequestId, std::vector<int32_t>> by_id;
  int64_t preemptions = 0;
  void on_arrival(RequestId, double) override {}
  void on_preemption(RequestId, double) override { ++preemptions; }
  void on_step(const StepPlan&, const StepOutcome&, double, const InstanceCounters&) override {}
  void on_record(const RequestRecord& r) override { by_id[r.id] = *runner->tokens(r.id); }
};

TEST_CASE("engine loop: preemption (recompute) and prefix-cache hits leave every generated token unchanged") {
  auto generate = [](int64_t pages, bool prefix_cache, int64_t* preemptions) {
    test::FakeClock clock(1e-5);
    ModelRunner runner = make_runner(clock, pages);
    InstanceConfig config = small_instance(pages, ReservationPolicy::kIncremental);
    config.kv.prefix_cache = prefix_cache;
    Instance instance(config);
    Tokens out;
    out.runner = &runner;
    const std::vector<TimedRequest> arrivals = workload();
    (void)run_engine_loop(instance, runner, clock, arrivals, 9, out);
    *preemptions = out.preemptions;
    return out.by_id;
  };
  int64_t roomy_preemptions = 0, tight_preemptions = 0, uncached_preemptions = 0;
  const auto roomy = generate(64, true, &roomy_preemptions);
  const auto tight = generate(12, true, &tight_preemptions);
  const auto uncached = generate(64, false, &uncached_preemptions);
  CHECK(roomy_preemptions == 0);
  CHECK(tight_preemptions > 0);
  REQUIRE(roomy.size() == 12);
  for (const auto& [id, tokens] : roomy) {
    INFO("request " << id);
    CHECK(tokens.size() > 40);
    CHECK(tight.at(id) == tokens);
    CHECK(uncached.at(id) == tokens);
  }
}

TEST_CASE("page preview: the pages the runner writes are the pages the core's commit allocates") {
  for (const ReservationPolicy policy : {ReservationPolicy::kIncremental, ReservationPolicy::kWholeRequest}) {
    Instance instance(small_instance(20, policy));
    int64_t compared = 0;
    for (const TimedRequest& t : workload()) instance.add_request(t.spec, 0.0);
    for (int step = 0; step < 200 && instance.has_work(); ++step) {
      StepPlan plan = instance.plan();
      const StepPages pages = preview_step_pages(instance, plan);
      instance.commit(plan, StepOutcome{}, 0.0);
      std::vector<RequestRecord> done;
      instance.drain(done);
      const Scheduler& rank = instance.rank(0);
      for (size_t i = 0; i < plan.batches.ranks[0].entries.size(); ++i) {
        const int32_t slot = plan.ranks[0].entry_slots[i];
        if (!rank.kv().holds(slot)) continue;  // finished this step: its pages went back
        const std::span<const PageId> table = rank.kv().page_table(slot);
        REQUIRE(std::vector<int32_t>(table.begin(), table.end()) == pages[0][i]);
        ++compared;
      }
    }
    CHECK(!instance.has_work());
    CHECK(compared > 20);
  }
}
