// Randomized property test of the scheduler + KV core: random arrivals (some invalid), steps with random
// MTP outcomes (and arrivals between plan and commit), evictions, forced preemptions and drains, with
// check() after every operation. Replay a failure with TOKENLINE_SEED=<seed printed on failure>.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <pcg_random.hpp>

#include "engine/core/instance.h"
#include "tests/engine/core/core_test_util.h"

namespace tokenline {

namespace {

constexpr uint64_t kDefaultSeed = 20261129;
constexpr int kRounds = 10;                   // configurations drawn per run
constexpr int kOpsPerRound = 10000;           // 10 x 10,000 = 100,000 operations
constexpr int64_t kBlockTokens = 128;         // 2 pages per hash block: prefixes share at page granularity
constexpr int64_t kMaxDrainSteps = 20000000;  // tiny token budgets drain slowly; a livelock still fails

uint64_t seed_from_env() {
  const char* s = std::getenv("TOKENLINE_SEED");
  return s != nullptr ? std::strtoull(s, nullptr, 10) : kDefaultSeed;
}

int64_t uniform(pcg32& rng, int64_t lo, int64_t hi) {  // inclusive, hi - lo < 2^32
  return lo + static_cast<int64_t>(rng(static_cast<uint32_t>(hi - lo + 1)));
}

bool chance(pcg32& rng, uint32_t percent) {
  return rng(100) < percent;
}

InstanceConfig random_config(pcg32& rng) {
  InstanceConfig c;
  c.dp_ranks = static_cast<int32_t>(uniform(rng, 1, 2));
  c.assignment = static_cast<PlacementPolicy>(uniform(rng, 0, 2));
  c.kv.page_tokens = test::kPage;
  c.kv.total_pages = uniform(rng, 24, 96);
  c.kv.reservation = chance(rng, 50) ? ReservationPolicy::kWholeRequest : ReservationPolicy::kIncremental;
  c.kv.prefix_cache = chance(rng, 85);
  SchedulerConfig& s = c.scheduler;
  s.policy = static_cast<SchedulePolicy>(uniform(rng, 0, 2));
  const int64_t role = uniform(rng, 0, 9);
  s.role = role == 0   ? InstanceRole::kPrefillOnly
           : role == 1 ? InstanceRole::kDecodeOnly
                       : InstanceRole::kColocated;
  s.max_batch_tokens = chance(rng, 10) ? uniform(rng, 1, 8) : uniform(rng, 64, 1024);  // tiny: MTP > budget
  s.max_running_requests = static_cast<int32_t>(uniform(rng, 1, 12));
  s.long_prefill_token_threshold = chance(rng, 30) ? uniform(rng, 16, 256) : 0;
  s.mixed_batches = chance(rng, 60);
  s.solo_prefill_ratio = chance(rng, 50) ? 4 : 0;
  s.mtp_draft_tokens = static_cast<int32_t>(uniform(rng, 0, 3));
  s.max_context_tokens = 2048;
  s.lpm_max_queue = static_cast<int32_t>(uniform(rng, 2, 16));
  return c;
}

RequestSpec random_spec(pcg32& rng, RequestId id, uint64_t& unique_hash) {
  RequestSpec spec;
  spec.id = id;
  spec.prompt_tokens = uniform(rng, 1, 700);
  spec.output_tokens = uniform(rng, 1, 60);
  spec.priority = static_cast<int32_t>(uniform(rng, 0, 3));
  if (chance(rng, 4)) spec.prompt_tokens = -uniform(rng, 0, 5);       // invalid
  if (chance(rng, 3)) spec.output_tokens = 0;                         // invalid
  if (chance(rng, 3)) spec.prompt_tokens = uniform(rng, 1500, 3000);  // over context, or never fits
  if (spec.prompt_tokens > 0 && chance(rng, 80)) {
    spec.block_tokens = kBlockTokens;
    const int64_t family = uniform(rng, 0, 3);
    const int64_t shared = uniform(rng, 0, 5);
    const int64_t blocks = (spec.prompt_tokens + kBlockTokens - 1) / kBlockTokens;
    for (int64_t b = 0; b < blocks; ++b)
      spec.block_hashes.push_back(b < shared ? static_cast<uint64_t>(family * 100 + b) : ++unique_hash);
  }
  return spec;
}

void check_records(const std::vector<RequestRecord>& records, const InstanceConfig& config) {
  for (const RequestRecord& r : records) {
    INFO("request " << r.id << " status " << to_string(r.status));
    REQUIRE(r.status != RequestStatus::kWaiting);
    REQUIRE(r.status != RequestStatus::kRunning);
    if (r.status == RequestStatus::kRejected) {
      REQUIRE(r.reject_reason != RejectReason::kNone);
      continue;
    }
    const int64_t expected = config.scheduler.role == InstanceRole::kPrefillOnly ? 1 : r.output_tokens;
    REQUIRE(r.generated_tokens == expected);
    REQUIRE(static_cast<int64_t>(r.token_times_s.size()) == r.generated_tokens);
    REQUIRE(r.first_token_s >= r.arrival_s);
    REQUIRE(r.finish_s >= r.first_token_s);
    for (size_t i = 1; i < r.token_times_s.size(); ++i) REQUIRE(r.token_times_s[i] >= r.token_times_s[i - 1]);
  }
}

struct Driver {
  pcg32& rng;
  InstanceConfig config;
  Instance instance;
  double now_s = 0;
  RequestId next_id = 0;
  uint64_t unique_hash = 1u << 20;
  int64_t handed_out = 0;
  bool arrivals = true;
  StepPlan plan;
  StepOutcome outcome;
  std::vector<RequestRecord> records;

  Driver(pcg32& r, const InstanceConfig& c) : rng(r), config(c), instance(c) {}

  void arrive() {
    RequestSpec spec = random_spec(rng, next_id++, unique_hash);
    if (config.scheduler.role == InstanceRole::kDecodeOnly)
      instance.add_request_with_kv(std::move(spec), now_s);
    else
      instance.add_request(std::move(spec), now_s);
  }

  void step() {
    instance.plan(plan);
    if (arrivals && chance(rng, 20)) arrive();  // arrivals during the step do not invalidate the plan
    outcome.accepted_drafts.assign(plan.batches.ranks.size(), {});
    for (size_t r = 0; r < plan.batches.ranks.size(); ++r)
      for (const BatchEntry& e : plan.batches.ranks[r].entries)
        outcome.accepted_drafts[r].push_back(static_cast<int32_t>(uniform(rng, 0, e.draft_tokens)));
    now_s += 0.001 * static_cast<double>(uniform(rng, 1, 50));
    if (chance(rng, 50)) {  // the real engine's order: pages first, so page tables cover the step
      instance.allocate(plan);
      require_tables_cover(plan);
    }
    instance.commit(plan, outcome, now_s);
  }

  void require_tables_cover(const StepPlan& p) const {
    for (size_t r = 0; r < p.ranks.size(); ++r) {
      const Scheduler& rank = instance.rank(static_cast<int32_t>(r));
      for (size_t i = 0; i < p.ranks[r].entry_slots.size(); ++i) {
        const BatchEntry& e = p.batches.ranks[r].entries[i];
        const int64_t pages = static_cast<int64_t>(rank.kv().page_table(p.ranks[r].entry_slots[i]).size());
        REQUIRE(pages * config.kv.page_tokens >= e.context_tokens + e.new_tokens);
      }
    }
  }

  void plan_is_pure() {
    const InstanceCounters before = instance.counters();
    StepPlan a = instance.plan();
    StepPlan b = instance.plan();
    REQUIRE(a.batches.ranks.size() == b.batches.ranks.size());
    for (size_t r = 0; r < a.batches.ranks.size(); ++r) {
      REQUIRE(a.batches.ranks[r].entries.size() == b.batches.ranks[r].entries.size());
      REQUIRE(a.ranks[r].stop == b.ranks[r].stop);
      REQUIRE(a.ranks[r].preemptions == b.ranks[r].preemptions);
    }
    const InstanceCounters after = instance.counters();
    REQUIRE(before.waiting == after.waiting);
    REQUIRE(before.running == after.running);
    REQUIRE(before.kv.free_pages == after.kv.free_pages);
  }

  void drain() {
    records.clear();
    instance.drain(records);
    check_records(records, config);
    handed_out += static_cast<int64_t>(records.size());
  }

  void random_op() {
    const int64_t op = uniform(rng, 0, 99);
    if (op < 30) {
      arrive();
    } else if (op < 80) {
      step();
    } else if (op < 84) {
      plan_is_pure();
    } else if (op < 88) {
      instance.evict_cached_pages(static_cast<int32_t>(uniform(rng, 0, instance.dp_ranks() - 1)),
                                  uniform(rng, 1, 16));
    } else if (op < 92) {
      instance.preempt_one(static_cast<int32_t>(uniform(rng, 0, instance.dp_ranks() - 1)));
    } else {
      drain();
    }
  }
};

}  // namespace

TEST_CASE("Randomized: 100,000 operations keep every KV and scheduler invariant", "[core][property]") {
  const uint64_t seed = seed_from_env();
  INFO("seed " << seed << " (replay: TOKENLINE_SEED=" << seed << ")");
  pcg32 rng(seed);
  int64_t total_ops = 0;
  for (int round = 0; round < kRounds; ++round) {
    Driver d(rng, random_config(rng));
    INFO("round " << round << " policy " << to_string(d.config.scheduler.policy) << " reservation "
                  << to_string(d.config.kv.reservation) << " role " << to_string(d.config.scheduler.role));
    for (int op = 0; op < kOpsPerRound; ++op) {
      INFO("op " << op);
      d.random_op();
      ++total_ops;
      std::string why;
      const bool ok = d.instance.check(&why);
      INFO(why);
      REQUIRE(ok);
    }
    // Quiesce: no more arrivals; every request must finish.
    d.arrivals = false;
    int64_t steps = 0;
    while (d.instance.has_work() && steps < kMaxDrainSteps) {
      d.step();
      ++steps;
    }
    if (d.instance.has_work()) {  // what is stuck, for the failure message
      const InstanceCounters c = d.instance.counters();
      const StepPlan p = d.instance.plan();
      for (size_t r = 0; r < p.ranks.size(); ++r)
        UNSCOPED_INFO("rank " << r << " plans " << p.batches.ranks[r].entries.size() << " entries, stop "
                              << to_string(p.ranks[r].stop));
      UNSCOPED_INFO("waiting " << c.waiting << " running " << c.running << " free " << c.kv.free_pages
                               << " evictable " << c.kv.evictable_pages << " of " << c.kv.total_pages);
    }
    REQUIRE_FALSE(d.instance.has_work());
    d.drain();
    std::string why;
    REQUIRE(d.instance.check(&why));
    const InstanceCounters c = d.instance.counters();
    REQUIRE(d.handed_out == c.arrived);
    REQUIRE(c.finished + c.rejected == c.arrived);
    REQUIRE(c.kv.owned_pages == 0);
    REQUIRE(c.kv.used_pages == 0);
    REQUIRE(c.kv.free_pages + c.kv.cached_pages == c.kv.total_pages);
  }
  REQUIRE(total_ops == kRounds * kOpsPerRound);
}

namespace {

// One randomized run with a host tier on every configuration (sizes from none to more than HBM, every
// write policy): check() after every operation covers both tiers; returns what a replay must reproduce.
std::vector<int64_t> run_host_tier_rounds(uint64_t seed, int rounds, int ops) {
  pcg32 rng(seed);
  std::vector<int64_t> fingerprint;
  for (int round = 0; round < rounds; ++round) {
    InstanceConfig config = random_config(rng);
    config.kv.prefix_cache = true;
    config.kv.host.pages = uniform(rng, 1, 2 * config.kv.total_pages);
    config.kv.host.write_policy = static_cast<WritePolicy>(uniform(rng, 0, 2));
    config.kv.main_bytes_per_page = 1000;
    Driver d(rng, config);
    INFO("round " << round << " host pages " << config.kv.host.pages << " policy "
                  << to_string(config.kv.host.write_policy));
    for (int op = 0; op < ops; ++op) {
      INFO("op " << op);
      d.random_op();
      std::string why;
      const bool ok = d.instance.check(&why);
      INFO(why);
      REQUIRE(ok);
      for (const Batch& b : d.plan.batches.ranks)  // a load is priced on the bytes of the pages it loads
        for (const BatchEntry& e : b.entries) REQUIRE(e.host_load_tokens <= e.context_tokens);
    }
    d.arrivals = false;
    for (int64_t steps = 0; d.instance.has_work() && steps < kMaxDrainSteps; ++steps) d.step();
    REQUIRE_FALSE(d.instance.has_work());
    d.drain();
    std::string why;
    const bool ok = d.instance.check(&why);
    INFO(why);
    REQUIRE(ok);
    const InstanceCounters c = d.instance.counters();
    REQUIRE(c.finished + c.rejected == c.arrived);
    REQUIRE(c.kv.owned_pages == 0);
    REQUIRE(c.kv.free_pages + c.kv.cached_pages == c.kv.total_pages);
    REQUIRE(c.kv.host_cached_pages <= c.kv.host_total_pages);
    REQUIRE(c.kv.host_hit_tokens <= c.kv.prefix_hit_tokens);
    REQUIRE(c.kv.host_loaded_pages * config.kv.page_tokens == c.kv.host_hit_tokens);
    // Every page the host holds was written once, the rest of what was written was evicted by its LRU.
    REQUIRE(c.kv.host_written_pages == c.kv.host_cached_pages + c.kv.host_evicted_pages);
    fingerprint.insert(fingerprint.end(),
                       {c.kv.prefix_hit_tokens, c.kv.host_hit_tokens, c.kv.host_written_pages,
                        c.kv.host_evicted_pages, c.kv.evicted_pages, c.finished, c.preemptions});
  }
  return fingerprint;
}

}  // namespace

TEST_CASE("Randomized: a host tier keeps both tiers' invariants and replays bit for bit",
          "[core][property]") {
  const uint64_t seed = seed_from_env();
  INFO("seed " << seed << " (replay: TOKENLINE_SEED=" << seed << ")");
  constexpr int kHostRounds = 6;
  constexpr int kHostOps = 4000;
  const std::vector<int64_t> first = run_host_tier_rounds(seed, kHostRounds, kHostOps);
  const std::vector<int64_t> again = run_host_tier_rounds(seed, kHostRounds, kHostOps);
  REQUIRE(first == again);
  int64_t host_hits = 0;
  for (size_t i = 1; i < first.size(); i += 7) host_hits += first[i];
  REQUIRE(host_hits > 0);  // the runs exercised load-back, not only the HBM tier
}

TEST_CASE("Randomized: a window-layer pool keeps its invariants and bound under every operation",
          "[core][property][window]") {
  // Sliding-window models (docs/layers.md): a second pool beside the full layers' pages, from scarce (a few
  // requests' windows) to ample. check() after every operation covers both pools and the per-request bound.
  const uint64_t seed = seed_from_env();
  INFO("seed " << seed << " (replay: TOKENLINE_SEED=" << seed << ")");
  pcg32 rng(seed);
  int64_t dropped = 0, window_stops = 0;
  for (int round = 0; round < 6; ++round) {
    InstanceConfig config = random_config(rng);
    config.kv.window = {.window_tokens = uniform(rng, 1, 300), .total_pages = 0, .bytes_per_page = 1000};
    const int64_t per_request = (config.kv.window.window_tokens + test::kPage - 1) / test::kPage + 1;
    config.kv.window.total_pages = per_request * uniform(rng, 1, 8);
    Driver d(rng, config);
    INFO("round " << round << " window " << config.kv.window.window_tokens << " pool "
                  << config.kv.window.total_pages);
    for (int op = 0; op < 4000; ++op) {
      INFO("op " << op);
      d.random_op();
      std::string why;
      const bool ok = d.instance.check(&why);
      INFO(why);
      REQUIRE(ok);
      for (size_t r = 0; r < d.plan.ranks.size(); ++r)
        window_stops += d.plan.ranks[r].stop == StopReason::kKvPages ? 1 : 0;
    }
    d.arrivals = false;
    for (int64_t steps = 0; d.instance.has_work() && steps < kMaxDrainSteps; ++steps) d.step();
    if (d.instance.has_work()) {  // what is stuck, for the failure message
      const InstanceCounters c = d.instance.counters();
      const StepPlan p = d.instance.plan();
      for (size_t r = 0; r < p.ranks.size(); ++r)
        UNSCOPED_INFO("rank " << r << " plans " << p.batches.ranks[r].entries.size() << " entries, stop "
                              << to_string(p.ranks[r].stop));
      UNSCOPED_INFO("waiting " << c.waiting << " running " << c.running << " free " << c.kv.free_pages
                               << " window used " << c.kv.window.used_pages << " of "
                               << c.kv.window.total_pages << " role " << to_string(config.scheduler.role)
                               << " reservation " << to_string(config.kv.reservation));
    }
    REQUIRE_FALSE(d.instance.has_work());
    d.drain();
    std::string why;
    REQUIRE(d.instance.check(&why));
    const InstanceCounters c = d.instance.counters();
    REQUIRE(c.finished + c.rejected == c.arrived);
    REQUIRE(c.kv.window.used_pages == 0);  // every window page back in its pool
    REQUIRE(c.kv.window.peak_used_pages <= c.kv.window.total_pages);
    REQUIRE(c.kv.prefix_hit_tokens == 0);  // window models run without prefix hits
    dropped += c.kv.window.dropped_pages;
  }
  CHECK(dropped > 0);  // requests outgrew their windows and gave pages back
  CHECK(window_stops > 0);
}

}  // namespace tokenline
