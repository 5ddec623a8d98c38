// Scheduler: continuous batching for one attention rank. plan() is const and says what the next step would
// compute and why admission stopped; commit() applies a planned step and its outcome (allocate() is its
// optional first half; add/preempt_last/evict_cached/drain are the other mutations). Owns its requests
// (contiguous slots, stable while a request lives) and its rank's KvManager. Never throws; not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/batch.h"
#include "engine/core/kv_manager.h"
#include "engine/core/request.h"

namespace tokenline {

enum class SchedulePolicy {
  kFcfs,                // arrival order
  kLongestPrefixMatch,  // cache-aware: longest cached prefix first (FCFS beyond lpm_max_queue waiting)
  kPriority,            // larger RequestSpec::priority first, then arrival; preempts the least urgent first
};
std::string_view to_string(SchedulePolicy policy);

enum class InstanceRole {
  kColocated,    // prefill and decode on the same instance
  kPrefillOnly,  // PD: a request leaves (kHandedOff) after its last chunk samples the first token
  kDecodeOnly,   // PD: requests arrive with their prompt KV (add with kv_ready) and only decode
};
std::string_view to_string(InstanceRole role);

// Why prefill admission stopped this step (the first limit hit, as SGLang's PrefillAdder reports).
enum class StopReason {
  kQueueEmpty,        // nothing (more) waiting
  kTokenBudget,       // the step's token budget is spent
  kKvPages,           // the next request's pages do not fit (free + evictable)
  kMaxRunning,        // the running-request limit is reached
  kLongPrefillAlone,  // a prefill whose remainder dwarfs the rest of the batch runs alone this step
  kPreempted,         // running requests needed pages and were preempted: no admission this step
  kKvEstimate,        // kEstimate: the next request's prompt + output exceeds the estimated free tokens
  kRetracted,         // kEstimate: decodes lacked pages and were retracted: no admission this step
};
inline constexpr int kStopReasonCount = 8;
std::string_view to_string(StopReason reason);

// ReservationPolicy::kEstimate: SGLang's admission on an estimated future need (sources in
// cost/engine_behavior.h TokenRatio). A waiting request is admitted while its uncached prompt +
// min(remaining output, clip) stays below the free + evictable tokens less what the running requests are
// expected to need (remaining prompt + new_token_ratio x min(remaining output, clip)). The ratio decays by
// ratio_decay per decode step down to min_ratio; when a decode step lacks pages, running decodes are
// retracted (fewest tokens generated first, then longest prompt) until retract_headroom_tokens per
// remaining request are free, and the ratio restarts at (generated + headroom x n) / requested of those left.
struct EstimateConfig {
  double init_ratio = 0.7;
  double min_ratio = 0.098;
  double ratio_decay = (0.7 - 0.098) / 600;
  int32_t retract_headroom_tokens = 20;
  int64_t clip_output_tokens = 4096;
};

struct SchedulerConfig {
  SchedulePolicy policy = SchedulePolicy::kFcfs;
  InstanceRole role = InstanceRole::kColocated;
  int64_t max_batch_tokens = 32768;     // tokens per step = the prefill chunk (SGLang chunked_prefill_size)
  int32_t max_running_requests = 1024;  // admitted requests (prefilling or decoding)
  int64_t long_prefill_token_threshold =
      0;                      // vLLM: at most this many prefill tokens per request per step; 0 = off
  bool mixed_batches = true;  // decode and prefill in one step (vLLM); false: SGLang's alternation
  // The seed: a multi-step prefill whose remainder is "dozens of times" the rest of the batch runs alone.
  double solo_prefill_ratio = 32;                 // 0 = off
  int32_t mtp_draft_tokens = 0;                   // k: each decode entry computes 1 + k tokens
  int64_t max_context_tokens = int64_t{1} << 20;  // the model's context (GLM-5.3: 1M)
  int32_t lpm_max_queue = 128;  // SGLang: longest-prefix ordering only for queues up to this length
  EstimateConfig estimate;      // used with ReservationPolicy::kEstimate only
};

struct PlannedAdmission {
  int32_t slot = 0;
  PrefixMatch match;
};

// A rank's plan besides its Batch: enough for commit to apply it without re-deciding.
struct RankDecision {
  StopReason stop = StopReason::kQueueEmpty;
  std::vector<int32_t> entry_slots;          // parallel to Batch::entries
  std::vector<PlannedAdmission> admissions;  // waiting requests admitted this step (some may not compute)
  std::vector<int32_t> preemptions;          // running requests requeued (recompute) before the step,
                                             // retractions included
  std::vector<int32_t> retractions;          // kEstimate: those of the preemptions that are retractions
  int64_t new_pages = 0;                     // pages the step needs beyond those held (upper bound)
  int64_t host_store_pages = 0;              // write_back pages whose writes this step pays
  int64_t host_async_store_pages = 0;        // write-through copies started with this step (not waited on)
  uint64_t version = 0;                      // the scheduler state the plan was made against
};

struct SchedulerCounters {
  int64_t waiting = 0;
  int64_t running = 0;  // prefilling + decoding
  int64_t prefilling = 0;
  int64_t decoding = 0;
  int64_t finished = 0;     // finished or handed off, ever
  int64_t preemptions = 0;  // requeues for recompute, retractions included
  int64_t retractions = 0;  // of the preemptions, kEstimate retractions
  int64_t steps = 0;        // committed non-empty steps
  int64_t stop_counts[kStopReasonCount] = {};
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, const KvConfig& kv, int32_t rank);

  // Rejects (no slot taken) or queues the request. kv_ready: PD decode side, its prompt KV is present.
  RejectReason add(RequestSpec spec, double now_s, bool kv_ready);
  // The reason add() would give, without adding.
  RejectReason validate(const RequestSpec& spec, bool kv_ready) const;
  // arrived_before_s: waiting requests that reached the rank at or after it are not seen yet (an overlap
  // scheduler planned this step while the previous one ran; InstanceConfig::plan_ahead).
  // hold_context: plan no prefill work this step (no prefill chunk, no fresh admission), only decodes -
  // TensorRT-LLM's context holds (engine/core/context_hold.h).
  void plan(Batch& batch, RankDecision& decision,
            double arrived_before_s = std::numeric_limits<double>::infinity(),
            bool hold_context = false) const;
  // The first half of commit, for a world that needs page addresses before executing (the real engine):
  // applies the plan's preemptions and admissions and allocates the step's pages, so that
  // kv().page_table(slot) covers every token the step writes. REQUIRES as for commit; once per step.
  void allocate(const Batch& batch, const RankDecision& decision);
  // Applies a planned step and its outcome (allocating first unless allocate() did).
  // REQUIRES: batch/decision come from plan() on this state (adds since then are fine). accepted_drafts:
  // per batch entry, MTP drafts accepted (empty span: none).
  void commit(const Batch& batch, const RankDecision& decision, std::span<const int32_t> accepted_drafts,
              double now_s);
  // Preempts (recompute) the request the policy would pick first. False when nothing runs.
  bool preempt_last();
  // Ends a waiting or running request between steps - kCancelled (its client went away) or kFinished (a
  // stop condition: EOS, a stop string) - releasing its pages; its record drains like any other. False
  // when no such request waits or runs here. REQUIRES: status kCancelled or kFinished; not between a
  // step's allocate() and its commit().
  bool abort(RequestId id, RequestStatus status, double now_s);
  // Evicts up to pages unreferenced cached pages (memory pressure from outside); returns how many.
  int64_t evict_cached(int64_t pages);
  // Moves the records of finished / handed-off requests to out and frees their slots.
  void drain(std::vector<RequestRecord>& out);

  bool has_work() const { return !waiting_.empty() || !running_.empty(); }
  // Tokens of work queued or running (a load measure for rank assignment).
  int64_t load_tokens() const { return load_tokens_; }
  int64_t cached_prefix_tokens(std::span<const uint64_t> keys) const;
  SchedulerCounters counters() const;
  const KvManager& kv() const { return kv_; }
  KvManager& kv() { return kv_; }
  const SchedulerConfig& config() const { return config_; }
  // kEstimate: the share of the remaining output admission expects running requests to still produce.
  double new_token_ratio() const { return new_token_ratio_; }
  const Request& request(int32_t slot) const { return slots_[static_cast<size_t>(slot)]; }
  // KvManager::check plus: running requests hold their pages, waiting ones hold none, counters agree.
  bool check(std::string* why) const;

 private:
  struct Budget;
  struct PassFilter {
    bool prefill = true;     // schedule prefill work (running chunks, fresh admissions)
    bool decode = true;      // schedule decode work (running decodes, KV-ready admissions)
    int32_t only_slot = -1;  // the solo rule: plan this request alone
    double arrived_before_s = std::numeric_limits<double>::infinity();  // waiting requests seen
  };
  void plan_pass(Batch& batch, RankDecision& decision, const PassFilter& pass) const;
  void plan_running(Batch& batch, RankDecision& decision, Budget& budget, const PassFilter& pass) const;
  void plan_waiting(Batch& batch, RankDecision& decision, Budget& budget, const PassFilter& pass) const;
  // kEstimate (scheduler_estimate.cpp).
  bool estimating() const { return kv_.config().reservation == ReservationPolicy::kEstimate; }
  void plan_retractions(RankDecision& decision, Budget& budget) const;
  int64_t estimated_running_tokens() const;
  int64_t clipped_output(const Request& r) const;
  int64_t estimate_chunk(int32_t slot, const Request& r, int64_t want, const Budget& budget) const;
  bool estimate_refuses(const Request& r, int64_t cached, const Budget& budget,
                        const RankDecision& decision) const;
  void charge_estimate(const Request& r, int64_t cached, int64_t want, Budget& budget) const;
  void retract(int32_t slot);
  void update_ratio(const Batch& batch, const RankDecision& decision);
  int32_t pick_victim(Budget& budget, size_t self_index) const;
  int32_t solo_candidate(const Batch& batch, const RankDecision& decision) const;
  bool lpm_active() const;
  void lpm_order() const;
  int64_t max_kv_tokens(const Request& r) const;
  int64_t kv_target_tokens(const Request& r, int64_t context_tokens, int64_t new_tokens) const;
  int64_t match_limit_pages(const Request& r) const;
  int32_t decode_tokens(const Request& r) const;
  int64_t prefill_cap(int64_t remaining, const Budget& budget) const;
  bool waiting_before(int32_t a, int32_t b) const;
  int32_t new_slot();
  void enqueue_waiting(int32_t slot);
  void insert_running(int32_t slot);
  void preempt(int32_t slot);
  void admit(const PlannedAdmission& admission);
  bool advance(int32_t slot, const BatchEntry& entry, int32_t accepted, double now_s);
  void complete(int32_t slot, RequestStatus status, double now_s);
  void emit_tokens(Request& r, int64_t n, double now_s);

  SchedulerConfig config_;
  KvManager kv_;
  int32_t rank_ = 0;
  std::vector<Request> slots_;
  std::vector<int32_t> free_slots_;
  std::deque<int32_t> waiting_;   // policy order
  std::vector<int32_t> running_;  // policy order; preemption victims come from the back
  int64_t running_prefills_ = 0;  // of running_, the requests still prefilling (a prefill pass's work)
  std::vector<int32_t> done_;     // finished / handed off, not yet drained
  // Planning scratch (plan() is const but reuses these buffers: not thread-safe).
  mutable std::vector<int32_t> order_scratch_;    // LPM order of the waiting queue
  mutable std::vector<int32_t> retract_scratch_;  // kEstimate: decodes in retraction order
  mutable std::vector<int64_t> key_scratch_;      // LPM match pages, by slot
  mutable std::vector<PrefixMatch> lpm_hints_;    // by slot: the last LPM match, resumed next plan
  mutable std::vector<uint8_t> marked_;           // by slot: chosen as a preemption victim in this plan
  mutable Batch solo_batch_;                      // the solo rule's alternative plan
  mutable RankDecision solo_decision_;
  int64_t arrivals_ = 0;
  int64_t load_tokens_ = 0;
  uint64_t version_ = 0;
  bool allocated_ = false;  // allocate() ran for the step being executed
  int64_t finished_ = 0;
  int64_t preemptions_ = 0;
  int64_t retractions_ = 0;
  double new_token_ratio_ = 0;  // kEstimate: changed only by allocate()
  int64_t steps_ = 0;
  int64_t stop_counts_[kStopReasonCount] = {};
};

}  // namespace tokenline
