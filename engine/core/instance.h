// Instance: one serving instance bound to a device group: dp_ranks attention ranks (a Scheduler + KvManager
// each) stepping in lockstep. The step API: drivers add_request as requests arrive; the instance loop
// plans -> an Executor runs plan.batches -> commit(plan, outcome, now) -> drain the records that left.
// Time is data the driver passes in; the core never reads a clock and never throws.
//
// Drivers add requests as they arrive (also while a step executes) and run the one step loop over it,
// engine/core/instance_loop.h (plan, execute, commit, drain); nothing else calls plan and commit.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/context_hold.h"
#include "engine/core/executor.h"
#include "engine/core/kv_manager.h"
#include "engine/core/placement.h"
#include "engine/core/request.h"
#include "engine/core/scheduler.h"

namespace tokenline {

struct InstanceConfig {
  int32_t dp_ranks = 1;  // attention data-parallel degree; 1 without DP attention
  PlacementPolicy assignment = PlacementPolicy::kRoundRobin;  // of arriving requests to ranks
  SchedulerConfig scheduler;
  KvConfig kv;  // per rank
  // SGLang's event_loop_overlap: step n+1 is planned when step n is launched, so a request that arrives
  // while step n runs is first seen by step n+2's plan (run_instance_loop applies it).
  bool plan_ahead = false;
  // TensorRT-LLM's batch waiting / attention-DP balancing: context requests held out of a step (off unless
  // the engine sets them; engine/core/context_hold.h).
  ContextHoldConfig context_hold;
};

struct AddResult {
  RejectReason reason = RejectReason::kNone;  // kNone: queued
  int32_t rank = 0;
  bool accepted() const { return reason == RejectReason::kNone; }
};

// The next step: what to execute (batches, one Batch per rank, idle ranks empty) and the decisions that
// commit applies. Reuse one StepPlan across steps to avoid allocations.
struct StepPlan {
  StepBatches batches;
  std::vector<RankDecision> ranks;
  bool context_held = false;   // the context hold kept this step's prefill work out (every rank)
  ContextHoldState hold_next;  // the hold's counters once this step commits
  bool empty() const;          // no rank computes anything (a commit still applies preemptions)
};

struct InstanceCounters {
  int64_t arrived = 0;
  int64_t waiting = 0;
  int64_t running = 0;
  int64_t prefilling = 0;
  int64_t decoding = 0;
  int64_t finished = 0;  // finished or handed off
  int64_t rejected = 0;
  int64_t rejected_by_reason[kRejectReasonCount] = {};
  int64_t preemptions = 0;  // retractions included
  int64_t retractions = 0;
  int64_t steps = 0;
  int64_t last_batch_tokens = 0;
  int64_t stop_counts[kStopReasonCount] = {};  // committed steps by StopReason, summed over ranks
  KvCounters kv;                               // summed over ranks (peak: sum of per-rank peaks)
};

class Instance {
 public:
  explicit Instance(const InstanceConfig& config);

  // Queues a request on a rank chosen by the assignment policy, or rejects it with a reason (counted, and
  // handed out by drain like any other record).
  AddResult add_request(RequestSpec spec, double now_s);
  // PD decode side: the request's prompt KV is already here (after transfer); it only decodes.
  AddResult add_request_with_kv(RequestSpec spec, double now_s);
  // The same on a given rank (PD: the rank whose pages were reserved before the transfer).
  // REQUIRES: 0 <= rank < dp_ranks().
  AddResult add_request_with_kv(RequestSpec spec, double now_s, int32_t rank);

  // arrived_before_s: requests added at or after it are not planned yet (Scheduler::plan).
  void plan(StepPlan& out, double arrived_before_s = std::numeric_limits<double>::infinity()) const;
  StepPlan plan() const;
  // Optional first half of commit: preemptions, admissions and this step's pages, so that page tables
  // (rank(r).kv().page_table(slot)) cover what the step writes before it executes (the real engine).
  void allocate(const StepPlan& plan);
  // REQUIRES: plan came from plan() since the last commit; outcome from executing plan.batches.
  void commit(const StepPlan& plan, const StepOutcome& outcome, double now_s);
  // Moves out the records of requests that finished, were handed off or were rejected since the last drain.
  void drain(std::vector<RequestRecord>& out);

  bool has_work() const;
  InstanceCounters counters() const;
  int32_t dp_ranks() const { return static_cast<int32_t>(ranks_.size()); }
  bool plans_ahead() const { return config_.plan_ahead; }
  const Scheduler& rank(int32_t r) const { return ranks_[static_cast<size_t>(r)]; }
  // Moves out rank r's logged host-tier page copies (KvManager::take_copies) into out (cleared first).
  void take_tier_copies(int32_t r, std::vector<TierCopy>& out);
  // Test and driver hooks (memory pressure from outside): evict cached pages, preempt one request.
  int64_t evict_cached_pages(int32_t rank, int64_t pages);
  bool preempt_one(int32_t rank);
  // Scheduler::abort on whichever rank holds the request (false: none does). Between steps only.
  bool abort(RequestId id, RequestStatus status, double now_s);
  bool check(std::string* why) const;

 private:
  AddResult add(RequestSpec spec, double now_s, bool kv_ready, int32_t rank = -1);
  int32_t pick_rank(const RequestSpec& spec);

  InstanceConfig config_;
  std::vector<Scheduler> ranks_;
  std::vector<RequestRecord> rejected_;
  int64_t arrived_ = 0;
  Placement placement_;          // of arriving requests to ranks
  std::vector<int64_t> loads_;   // scratch: each rank's load for placement_
  std::vector<int64_t> cached_;  // scratch: each rank's cached prefix of the arriving prompt
  int64_t rejected_by_reason_[kRejectReasonCount] = {};
  ContextHoldState hold_state_;  // changed only by commit
  int64_t step_index_ = 0;
  int64_t last_batch_tokens_ = 0;
};

}  // namespace tokenline
