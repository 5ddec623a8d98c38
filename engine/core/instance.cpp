#include "engine/core/instance.h"

#include <cassert>

namespace tokenline {

bool StepPlan::empty() const {
  for (const Batch& b : batches.ranks)
    if (!b.empty()) return false;
  return true;
}

Instance::Instance(const InstanceConfig& config) : config_(config), placement_(config.assignment) {
  assert(config.dp_ranks >= 1 && "an instance has at least one attention rank");
  ranks_.reserve(static_cast<size_t>(config.dp_ranks));
  for (int32_t r = 0; r < config.dp_ranks; ++r) ranks_.emplace_back(config.scheduler, config.kv, r);
}

int32_t Instance::pick_rank(const RequestSpec& spec) {
  loads_.clear();
  cached_.clear();
  std::vector<uint64_t> keys;
  if (placement_.reads_caches()) keys = derive_page_keys(spec, config_.kv.page_tokens);
  for (const Scheduler& rank : ranks_) {
    loads_.push_back(rank.load_tokens());
    if (placement_.reads_caches()) cached_.push_back(rank.cached_prefix_tokens(keys));
  }
  return placement_.pick(loads_, cached_, spec.prompt_tokens);
}

AddResult Instance::add(RequestSpec spec, double now_s, bool kv_ready, int32_t rank) {
  AddResult result;
  ++arrived_;
  const RequestId id = spec.id;
  const int64_t prompt = spec.prompt_tokens;
  const int64_t output = spec.output_tokens;
  // Every rank has the same limits: validate before hashing a prompt of any claimed length.
  result.reason = ranks_.front().validate(spec, kv_ready);
  if (result.accepted()) {
    result.rank = rank >= 0 ? rank : pick_rank(spec);
    result.reason = ranks_[static_cast<size_t>(result.rank)].add(std::move(spec), now_s, kv_ready);
  }
  if (!result.accepted()) {
    ++rejected_by_reason_[static_cast<int>(result.reason)];
    RequestRecord record;
    record.id = id;
    record.status = RequestStatus::kRejected;
    record.reject_reason = result.reason;
    record.rank = result.rank;
    record.prompt_tokens = prompt;
    record.output_tokens = output;
    record.arrival_s = now_s;
    record.finish_s = now_s;
    rejected_.push_back(std::move(record));
  }
  return result;
}

AddResult Instance::add_request(RequestSpec spec, double now_s) {
  return add(std::move(spec), now_s, false);
}

AddResult Instance::add_request_with_kv(RequestSpec spec, double now_s) {
  return add(std::move(spec), now_s, true);
}

AddResult Instance::add_request_with_kv(RequestSpec spec, double now_s, int32_t rank) {
  assert(rank >= 0 && rank < dp_ranks() && "rank out of range");
  return add(std::move(spec), now_s, true, rank);
}

void Instance::plan(StepPlan& out, double arrived_before_s) const {
  const size_t n = ranks_.size();
  out.batches.step_index = step_index_;
  out.batches.ranks.resize(n);
  out.ranks.resize(n);
  for (size_t r = 0; r < n; ++r) ranks_[r].plan(out.batches.ranks[r], out.ranks[r], arrived_before_s);
  out.context_held = false;
  out.hold_next = hold_state_;
  if (!config_.context_hold.any()) return;
  std::vector<RankSchedule> scheduled(n);
  for (size_t r = 0; r < n; ++r) {
    for (const BatchEntry& e : out.batches.ranks[r].entries) {
      if (e.phase == Phase::kPrefill) {
        ++scheduled[r].context_requests;
        scheduled[r].scheduled_tokens += e.context_tokens + e.new_tokens;  // get_tokens(0): the prompt so far
      } else {
        ++scheduled[r].generation_requests;
        scheduled[r].scheduled_tokens += e.new_tokens;  // 1 + draft tokens
      }
    }
  }
  const ContextHoldDecision d = decide_context_hold(config_.context_hold, scheduled, hold_state_);
  out.hold_next = d.next;
  out.context_held = d.hold;
  if (!d.hold) return;
  for (size_t r = 0; r < n; ++r)
    ranks_[r].plan(out.batches.ranks[r], out.ranks[r], arrived_before_s, /*hold_context=*/true);
}

StepPlan Instance::plan() const {
  StepPlan out;
  plan(out);
  return out;
}

void Instance::take_tier_copies(int32_t r, std::vector<TierCopy>& out) {
  out.clear();
  ranks_[static_cast<size_t>(r)].kv().take_copies(out);
}

void Instance::allocate(const StepPlan& plan) {
  assert(plan.batches.ranks.size() == ranks_.size() && plan.ranks.size() == ranks_.size());
  for (size_t r = 0; r < ranks_.size(); ++r) ranks_[r].allocate(plan.batches.ranks[r], plan.ranks[r]);
}

void Instance::commit(const StepPlan& plan, const StepOutcome& outcome, double now_s) {
  assert(plan.batches.ranks.size() == ranks_.size() && plan.ranks.size() == ranks_.size());
  int64_t tokens = 0;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    std::span<const int32_t> accepted;
    if (r < outcome.accepted_drafts.size()) accepted = outcome.accepted_drafts[r];
    ranks_[r].commit(plan.batches.ranks[r], plan.ranks[r], accepted, now_s);
    tokens += plan.batches.ranks[r].total_tokens();
  }
  last_batch_tokens_ = tokens;
  hold_state_ = plan.hold_next;
  ++step_index_;
}

void Instance::drain(std::vector<RequestRecord>& out) {
  for (RequestRecord& record : rejected_) out.push_back(std::move(record));
  rejected_.clear();
  for (Scheduler& s : ranks_) s.drain(out);
}

bool Instance::has_work() const {
  for (const Scheduler& s : ranks_)
    if (s.has_work()) return true;
  return false;
}

InstanceCounters Instance::counters() const {
  InstanceCounters c;
  c.arrived = arrived_;
  for (int i = 0; i < kRejectReasonCount; ++i) {
    c.rejected_by_reason[i] = rejected_by_reason_[i];
    c.rejected += rejected_by_reason_[i];
  }
  c.steps = step_index_;
  c.last_batch_tokens = last_batch_tokens_;
  for (const Scheduler& s : ranks_) {
    const SchedulerCounters sc = s.counters();
    c.waiting += sc.waiting;
    c.running += sc.running;
    c.prefilling += sc.prefilling;
    c.decoding += sc.decoding;
    c.finished += sc.finished;
    c.preemptions += sc.preemptions;
    c.retractions += sc.retractions;
    for (int i = 0; i < kStopReasonCount; ++i) c.stop_counts[i] += sc.stop_counts[i];
    const KvCounters k = s.kv().counters();
    c.kv.total_pages += k.total_pages;
    c.kv.free_pages += k.free_pages;
    c.kv.owned_pages += k.owned_pages;
    c.kv.cached_pages += k.cached_pages;
    c.kv.evictable_pages += k.evictable_pages;
    c.kv.used_pages += k.used_pages;
    c.kv.peak_used_pages += k.peak_used_pages;
    c.kv.used_main_bytes += k.used_main_bytes;
    c.kv.used_indexer_bytes += k.used_indexer_bytes;
    c.kv.prefix_query_tokens += k.prefix_query_tokens;
    c.kv.prefix_hit_tokens += k.prefix_hit_tokens;
    c.kv.hash_comparisons += k.hash_comparisons;
    c.kv.evicted_pages += k.evicted_pages;
    c.kv.host_total_pages += k.host_total_pages;
    c.kv.host_cached_pages += k.host_cached_pages;
    c.kv.host_hit_tokens += k.host_hit_tokens;
    c.kv.host_loaded_pages += k.host_loaded_pages;
    c.kv.host_written_pages += k.host_written_pages;
    c.kv.host_evicted_pages += k.host_evicted_pages;
    c.kv.host_loaded_bytes += k.host_loaded_bytes;
    c.kv.host_written_bytes += k.host_written_bytes;
    c.kv.state_total_slots += k.state_total_slots;
    c.kv.state_used_slots += k.state_used_slots;
    c.kv.state_peak_used_slots += k.state_peak_used_slots;
    c.kv.state_used_bytes += k.state_used_bytes;
    c.kv.window.total_pages += k.window.total_pages;
    c.kv.window.used_pages += k.window.used_pages;
    c.kv.window.peak_used_pages += k.window.peak_used_pages;
    c.kv.window.used_bytes += k.window.used_bytes;
    c.kv.window.dropped_pages += k.window.dropped_pages;
  }
  return c;
}

int64_t Instance::evict_cached_pages(int32_t rank, int64_t pages) {
  return ranks_[static_cast<size_t>(rank)].evict_cached(pages);
}

bool Instance::preempt_one(int32_t rank) {
  return ranks_[static_cast<size_t>(rank)].preempt_last();
}

bool Instance::abort(RequestId id, RequestStatus status, double now_s) {
  for (Scheduler& s : ranks_)
    if (s.abort(id, status, now_s)) return true;
  return false;
}

bool Instance::check(std::string* why) const {
  for (const Scheduler& s : ranks_)
    if (!s.check(why)) return false;
  return true;
}

}  // namespace tokenline
