#include "engine/core/context_hold.h"

#include <catch2/catch.hpp>
#include <vector>

#include "engine/core/instance.h"
#include "tests/engine/core/core_test_util.h"
#include "tests/engine/core/fake_executor.h"

namespace tokenline {

using test::FakeExecutor;
using test::make_config;
using test::make_spec;
using test::require_check;

namespace {

// The 0-based index of the first executed step in which request id computes prefill tokens; -1: none.
int first_prefill_step(const FakeExecutor& exec, RequestId id) {
  for (size_t s = 0; s < exec.history.size(); ++s)
    for (const Batch& b : exec.history[s].ranks)
      for (const BatchEntry& e : b.entries)
        if (e.id == id && e.phase == Phase::kPrefill) return static_cast<int>(s);
  return -1;
}

ContextHoldConfig balance_config(int32_t timeout_iters, int32_t batching_wait_iters) {
  return ContextHoldConfig{.adp_balance = true,
                           .adp_timeout_iters = timeout_iters,
                           .adp_batching_wait_iters = batching_wait_iters};
}

}  // namespace

TEST_CASE("Issue 43: TensorRT-LLM's context holds are off by default (llm_args.py)", "[core][context_hold]") {
  const ContextHoldConfig c;
  CHECK_FALSE(c.any());
  CHECK(c.batch_wait_timeout_iters == 0);     // batch_wait_timeout_iters default 0
  CHECK(c.batch_wait_max_tokens_ratio == 0);  // batch_wait_max_tokens_ratio default 0
  CHECK_FALSE(c.adp_balance);                 // attention_dp_config default None
  CHECK(c.adp_timeout_iters == 50);           // AttentionDpConfig.timeout_iters
  CHECK(c.adp_batching_wait_iters == 10);     // AttentionDpConfig.batching_wait_iters
  const std::vector<RankSchedule> ranks = {{.context_requests = 1, .generation_requests = 1},
                                           {.context_requests = 0, .generation_requests = 1}};
  const ContextHoldDecision d = decide_context_hold(c, ranks, ContextHoldState{});
  CHECK_FALSE(d.hold);
  CHECK(d.next == ContextHoldState{});
}

TEST_CASE("Issue 43: attention-DP balancing waits for every rank's context request, up to its timeout",
          "[core][context_hold]") {
  const ContextHoldConfig c = balance_config(3, 0);
  const std::vector<RankSchedule> one_rank_ready = {{.context_requests = 1, .generation_requests = 2},
                                                    {.context_requests = 0, .generation_requests = 2}};
  ContextHoldState s;
  for (int iter = 1; iter <= 2; ++iter) {
    const ContextHoldDecision d = decide_context_hold(c, one_rank_ready, s);
    CHECK(d.hold);
    CHECK(d.next.adp_waiting_iters == iter);
    s = d.next;
  }
  ContextHoldDecision d = decide_context_hold(c, one_rank_ready, s);
  CHECK_FALSE(d.hold);  // the third waiting iteration reaches timeout_iters 3: released, counter reset
  CHECK(d.next.adp_waiting_iters == 0);
  // A rank with nothing to generate would idle: no wait at all ("not all_ranks_have_gen_requests").
  const std::vector<RankSchedule> idle_rank = {{.context_requests = 1, .generation_requests = 2},
                                               {.context_requests = 0, .generation_requests = 0}};
  d = decide_context_hold(c, idle_rank, ContextHoldState{});
  CHECK_FALSE(d.hold);
  // Every rank has a context request and generation requests: batching_wait_iters more steps.
  const ContextHoldConfig wait2 = balance_config(50, 2);
  const std::vector<RankSchedule> all_ready = {{.context_requests = 1, .generation_requests = 2},
                                               {.context_requests = 2, .generation_requests = 1}};
  s = ContextHoldState{.adp_waiting_iters = 7};
  d = decide_context_hold(wait2, all_ready, s);
  CHECK(d.hold);
  CHECK(d.next.adp_waiting_iters == 0);
  CHECK(d.next.adp_batching_iters == 1);
  d = decide_context_hold(wait2, all_ready, d.next);
  CHECK(d.hold);
  d = decide_context_hold(wait2, all_ready, d.next);
  CHECK_FALSE(d.hold);
  CHECK(d.next.adp_batching_iters == 0);
  // A rank full of generation requests (max_batch_size) has no free context slot: wait as for a missing one.
  ContextHoldConfig full = balance_config(50, 0);
  full.max_batch_size = 2;
  d = decide_context_hold(full, all_ready, ContextHoldState{});
  CHECK(d.hold);
  CHECK(d.next.adp_waiting_iters == 1);
}

TEST_CASE("Issue 43: batch waiting holds context requests until the timeout or the token ratio",
          "[core][context_hold]") {
  const ContextHoldConfig c{
      .batch_wait_timeout_iters = 2, .batch_wait_max_tokens_ratio = 0.5, .max_num_tokens = 1000};
  REQUIRE(c.batch_waiting());
  const std::vector<RankSchedule> small = {
      {.context_requests = 1, .generation_requests = 3, .scheduled_tokens = 103}};
  ContextHoldDecision d = decide_context_hold(c, small, ContextHoldState{});
  CHECK(d.hold);
  d = decide_context_hold(c, small, d.next);
  CHECK(d.hold);
  d = decide_context_hold(c, small, d.next);
  CHECK_FALSE(d.hold);  // batch_wait_iters_count 2 >= batch_wait_timeout_iters 2
  CHECK(d.next.batch_wait_iters == 0);
  const std::vector<RankSchedule> large = {
      {.context_requests = 1, .generation_requests = 3, .scheduled_tokens = 500}};
  CHECK_FALSE(decide_context_hold(c, large, ContextHoldState{}).hold);  // 500 >= 0.5 x 1000
  // No generation request: no wait ("to avoid dead waiting"); the counter stays.
  const std::vector<RankSchedule> alone = {{.context_requests = 1, .generation_requests = 0}};
  d = decide_context_hold(c, alone, ContextHoldState{.batch_wait_iters = 1});
  CHECK_FALSE(d.hold);
  CHECK(d.next.batch_wait_iters == 1);
  // Under attention DP batch waiting does not apply (py_executor.py: "not self.enable_attention_dp").
  const std::vector<RankSchedule> dp = {small.front(), small.front()};
  CHECK_FALSE(decide_context_hold(c, dp, ContextHoldState{}).hold);
}

TEST_CASE("Issue 43: under attention-DP balancing a prompt on one rank waits for the timeout",
          "[core][context_hold][instance]") {
  // Two attention-DP ranks, round-robin: requests 1 and 3 on rank 0, 2 on rank 1. timeout_iters 3.
  //   step 0: r0 [prefill 1]            r1 [prefill 2]   every rank has context, none generates: run
  //   step 1: r0 [decode 1]             r1 [decode 2]    request 3 arrives on r0 after step 0
  //   step 1..3: r0 holds 3's prompt (r1 has no context request, both generate): waiting 1, 2, then 3 =
  //              timeout at step 3, which runs 3's prefill
  // Without the rule 3 prefills in step 1.
  for (const bool balance : {false, true}) {
    InstanceConfig config = make_config(1024, ReservationPolicy::kWholeRequest);
    config.dp_ranks = 2;
    config.assignment = PlacementPolicy::kRoundRobin;
    if (balance) config.context_hold = balance_config(3, 0);
    Instance instance(config);
    REQUIRE(instance.add_request(make_spec(1, 100, 20), 0).rank == 0);
    REQUIRE(instance.add_request(make_spec(2, 100, 20), 0).rank == 1);
    FakeExecutor exec;
    double t = test::step(instance, exec, 0);
    REQUIRE(instance.add_request(make_spec(3, 100, 5), t).rank == 0);
    while (instance.has_work()) {
      t += test::step(instance, exec, t);
      require_check(instance);
    }
    INFO("balance " << balance);
    CHECK(first_prefill_step(exec, 1) == 0);
    CHECK(first_prefill_step(exec, 3) == (balance ? 3 : 1));
    // Held steps still decode on both ranks, and run nothing else.
    for (size_t s = 1; balance && s < 3; ++s) {
      CHECK(exec.history[s].ranks[0].entries.size() == 1);
      CHECK(exec.history[s].ranks[0].decode_requests() == 1);
      CHECK(exec.history[s].ranks[1].decode_requests() == 1);
    }
  }
}

TEST_CASE("Issue 43: batch waiting delays a small prompt joining running decodes",
          "[core][context_hold][instance]") {
  // One rank (attention TP), batch_wait_timeout_iters 2, ratio 0.9 of 1,000 tokens: request 2 (100 tokens)
  // arrives while request 1 decodes; 101 scheduled tokens < 900, so it waits two steps and prefills in the
  // third after its arrival (step 3); without the rule in step 1.
  for (const bool wait : {false, true}) {
    InstanceConfig config = make_config(1024, ReservationPolicy::kWholeRequest);
    if (wait)
      config.context_hold = ContextHoldConfig{
          .batch_wait_timeout_iters = 2, .batch_wait_max_tokens_ratio = 0.9, .max_num_tokens = 1000};
    Instance instance(config);
    REQUIRE(instance.add_request(make_spec(1, 100, 20), 0).accepted());
    FakeExecutor exec;
    double t = test::step(instance, exec, 0);
    REQUIRE(instance.add_request(make_spec(2, 100, 5), t).accepted());
    while (instance.has_work()) {
      t += test::step(instance, exec, t);
      require_check(instance);
    }
    INFO("wait " << wait);
    CHECK(first_prefill_step(exec, 2) == (wait ? 3 : 1));
  }
}

}  // namespace tokenline
