#include "engine/runtime/engine_loop.h"

#include <catch2/catch.hpp>
#include <map>

#include "engine/core/instance_loop.h"
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
  void on_preemption(RequestId, double, bool) override { ++preemptions; }
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

TEST_CASE("engine loop: every request completes, a fake clock makes the whole run deterministic") {
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
  void on_preemption(RequestId, double, bool) override { ++preemptions; }
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

// Keeps each finished request's tokens and the instance's last counters (the host tier's hits).
struct TierTokens final : EngineObserver {
  const ModelRunner* runner = nullptr;
  std::map<RequestId, std::vector<int32_t>> by_id;
  InstanceCounters last;
  int64_t steps_with_copies = 0;
  void on_arrival(RequestId, double) override {}
  void on_preemption(RequestId, double, bool) override {}
  void on_step(const StepPlan& plan, const StepOutcome& o, double, const InstanceCounters& c) override {
    last = c;
    bool copies = false;
    for (const auto& rank : plan.batches.tier_copies) copies |= !rank.empty();
    steps_with_copies += copies ? 1 : 0;
    if (copies) CHECK(o.tier_stall_s > 0);  // the copies' measured time is in the step
  }
  void on_record(const RequestRecord& r) override { by_id[r.id] = *runner->tokens(r.id); }
};

TEST_CASE("engine loop: prefixes loaded back from the host tier give the tokens of computing them") {
  // 8 HBM pages of 16 tokens cannot keep the 3 groups' prefixes between their requests; 48 host slots can.
  // log_copies false: the same decisions (the core's log changes none) with no page copied, what a tier
  // that only pretended to copy would compute from.
  auto generate = [](WritePolicy policy, bool log_copies, InstanceCounters* counters) {
    test::FakeClock clock(1e-5);
    const ModelShape shape = load_model_shape("glm-5.3-tiny");
    ModelRunner runner(shape, ModelWeights::random(shape, 5),
                       RunnerConfig{.total_pages = 8, .page_tokens = kPageTokens, .host_pages = 48}, clock);
    InstanceConfig config = small_instance(8, ReservationPolicy::kIncremental);
    config.kv.host = HostTierConfig{.pages = 48, .write_policy = policy, .log_copies = log_copies};
    Instance instance(config);
    TierTokens out;
    out.runner = &runner;
    (void)run_engine_loop(instance, runner, clock, workload(), 9, out);
    std::string why;
    CHECK(instance.check(&why));
    CHECK((out.steps_with_copies > 0) == log_copies);
    *counters = out.last;
    return out.by_id;
  };
  InstanceCounters none;
  const auto computed = [&] {
    test::FakeClock clock(1e-5);
    ModelRunner runner = make_runner(clock, 64);
    InstanceConfig config = small_instance(64, ReservationPolicy::kIncremental);
    config.kv.prefix_cache = false;
    Instance instance(config);
    Tokens out;
    out.runner = &runner;
    (void)run_engine_loop(instance, runner, clock, workload(), 9, out);
    return out.by_id;
  }();
  REQUIRE(computed.size() == 12);
  for (const WritePolicy policy : {WritePolicy::kWriteThrough, WritePolicy::kWriteBack}) {
    INFO(to_string(policy));
    InstanceCounters c;
    const auto tiered = generate(policy, true, &c);
    CHECK(c.kv.host_hit_tokens > 0);  // some prefixes came back from host ...
    CHECK(c.kv.host_loaded_pages > 0);
    REQUIRE(tiered.size() == 12);
    for (const auto& [id, tokens] : computed) {
      INFO("request " << id);
      CHECK(tiered.at(id) == tokens);  // ... and gave the tokens of computing them
    }
    // The same decisions with no copy made: stale pages change some token (the check above can fail).
    const auto stale = generate(policy, false, &none);
    int64_t differ = 0;
    for (const auto& [id, tokens] : computed) differ += stale.at(id) != tokens ? 1 : 0;
    CHECK(differ > 0);
  }
}

TEST_CASE("engine loop: the MTP layer's drafts, verified in the runner, change no generated token") {
  auto generate = [](int64_t pages, int32_t mtp, int64_t* steps, int64_t* preemptions) {
    test::FakeClock clock(1e-5);
    const ModelShape shape = load_model_shape("glm-5.3-tiny");
    ModelRunner runner(
        shape, ModelWeights::random(shape, 5),
        RunnerConfig{.total_pages = pages, .page_tokens = kPageTokens, .mtp_draft_tokens = mtp}, clock);
    InstanceConfig config = small_instance(pages, ReservationPolicy::kIncremental);
    config.scheduler.mtp_draft_tokens = mtp;
    Instance instance(config);
    Tokens out;
    out.runner = &runner;
    *steps = run_engine_loop(instance, runner, clock, workload(), 9, out).steps;
    *preemptions = out.preemptions;
    std::string why;
    CHECK(instance.check(&why));
    return out.by_id;
  };
  int64_t plain_steps = 0, unused = 0;
  const auto plain = generate(64, 0, &plain_steps, &unused);
  REQUIRE(plain.size() == 12);
  for (const int32_t k : {1, 3}) {
    INFO("k = " << k);
    int64_t mtp_steps = 0, tight_steps = 0, preemptions = 0;
    const auto mtp = generate(64, k, &mtp_steps, &unused);
    const auto tight = generate(14, k, &tight_steps, &preemptions);
    CHECK(preemptions > 0);  // drafts survive recompute
    for (const auto& [id, tokens] : plain) {
      INFO("request " << id);
      CHECK(mtp.at(id) == tokens);
      CHECK(tight.at(id) == tokens);
    }
    // Random weights: drafts rarely stand. At k = 1 they never cost a step here; at k = 3 each decode's
    // 4 rows share the 64-token budget with prefill chunks, so steps can grow (21 against 18) - the
    // cost of speculating with a low acceptance, which the simulator's --mtp-accept models.
    if (k == 1) CHECK(mtp_steps <= plain_steps);
  }
}

namespace {

// What a step decides on one rank, flattened so that two instances' plans compare with ==.
std::vector<int64_t> decision_key(const StepPlan& plan) {
  std::vector<int64_t> key;
  for (size_t r = 0; r < plan.ranks.size(); ++r) {
    for (const BatchEntry& e : plan.batches.ranks[r].entries)
      key.insert(key.end(), {e.id, static_cast<int64_t>(e.phase), e.new_tokens, e.context_tokens});
    key.push_back(-1);
    key.insert(key.end(), plan.ranks[r].entry_slots.begin(), plan.ranks[r].entry_slots.end());
    key.insert(key.end(), plan.ranks[r].preemptions.begin(), plan.ranks[r].preemptions.end());
    for (const PlannedAdmission& a : plan.ranks[r].admissions) key.insert(key.end(), {a.slot, a.match.pages});
    key.push_back(static_cast<int64_t>(plan.ranks[r].stop));
  }
  return key;
}

std::vector<int32_t> table_of(const Instance& instance, int32_t slot) {
  const std::span<const PageId> table = instance.rank(0).kv().page_table(slot);
  return {table.begin(), table.end()};
}

}  // namespace

// [rank][entry]: each batch entry's page ids, from the batches' CSR page tables.
using StepPages = std::vector<std::vector<std::vector<int32_t>>>;
StepPages pages_of(const StepPlan& plan) {
  StepPages pages;
  for (const BatchPages& t : plan.batches.pages) {
    pages.emplace_back();
    for (size_t i = 0; i + 1 < t.indptr.size(); ++i)
      pages.back().emplace_back(t.indices.begin() + t.indptr[i], t.indices.begin() + t.indptr[i + 1]);
  }
  return pages;
}

// The engine loop's order (plan, allocate, hand the runner the core's tables, arrivals join while the step
// executes, commit) against the sim's (plan, arrivals, commit): the same decisions and the same tables,
// and the pages the runner writes are the ones the core keeps.
TEST_CASE("allocate: the runner's pages are the core's tables, allocate before commit changes no decision") {
  for (const ReservationPolicy policy : {ReservationPolicy::kIncremental, ReservationPolicy::kWholeRequest}) {
    INFO("reservation " << static_cast<int>(policy));
    Instance engine(small_instance(12, policy));  // allocates before executing, as run_engine_loop does
    Instance sim(small_instance(12, policy));     // commit alone, as the sim's driver does
    const std::vector<TimedRequest> arrivals = workload();
    size_t next = 0;
    for (; next < 4; ++next) {  // a burst at time 0 that 12 pages cannot hold, then one per step
      engine.add_request(arrivals[next].spec, 0.0);
      sim.add_request(arrivals[next].spec, 0.0);
    }
    int64_t compared = 0;
    int64_t preempted_with_arrivals = 0;  // steps whose allocate() preempted before arrivals joined
    std::vector<RequestRecord> engine_done, sim_done;
    for (int step = 0; step < 200 && (next < arrivals.size() || engine.has_work()); ++step) {
      StepPlan plan = engine.plan();
      const StepPlan sim_plan = sim.plan();
      REQUIRE(decision_key(plan) == decision_key(sim_plan));
      engine.allocate(plan);
      attach_page_tables(engine, plan);
      const StepPages pages = pages_of(plan);
      REQUIRE(pages.size() == 1);
      REQUIRE(pages[0].size() == plan.batches.ranks[0].entries.size());
      for (size_t i = 0; i < pages[0].size(); ++i) {
        const BatchEntry& e = plan.batches.ranks[0].entries[i];
        const int64_t need = (e.context_tokens + e.new_tokens + kPageTokens - 1) / kPageTokens;
        CHECK(static_cast<int64_t>(pages[0][i].size()) >= need);  // covers what the step writes
      }
      if (!plan.ranks[0].preemptions.empty() && next < arrivals.size()) ++preempted_with_arrivals;
      if (next < arrivals.size()) {  // one arrival while each step executes
        engine.add_request(arrivals[next].spec, step);
        sim.add_request(arrivals[next].spec, step);
        ++next;
      }
      engine.commit(plan, StepOutcome{}, step + 1.0);
      sim.commit(sim_plan, StepOutcome{}, step + 1.0);
      for (size_t i = 0; i < pages[0].size(); ++i) {
        const int32_t slot = plan.ranks[0].entry_slots[i];
        if (!engine.rank(0).kv().holds(slot)) continue;  // finished this step: its pages went back
        REQUIRE(table_of(engine, slot) == pages[0][i]);
        REQUIRE(table_of(sim, slot) == pages[0][i]);
        ++compared;
      }
      engine.drain(engine_done);
      sim.drain(sim_done);
    }
    std::string why;
    CHECK(engine.check(&why));
    CHECK(!engine.has_work());
    CHECK(!sim.has_work());
    CHECK(compared > 20);
    CHECK(engine.counters().preemptions == sim.counters().preemptions);
    if (policy == ReservationPolicy::kIncremental) CHECK(preempted_with_arrivals > 0);
    REQUIRE(engine_done.size() == arrivals.size());
    REQUIRE(sim_done.size() == arrivals.size());
    for (size_t i = 0; i < engine_done.size(); ++i) {
      CHECK(engine_done[i].id == sim_done[i].id);
      CHECK(engine_done[i].finish_s == sim_done[i].finish_s);
      CHECK(engine_done[i].preemptions == sim_done[i].preemptions);
      CHECK(engine_done[i].cached_tokens == sim_done[i].cached_tokens);
    }
  }
}
