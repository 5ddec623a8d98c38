#include "engine/core/scheduler.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "engine/core/scheduler_budget.h"

namespace tokenline {

std::string_view to_string(SchedulePolicy policy) {
  switch (policy) {
    case SchedulePolicy::kFcfs:
      return "fcfs";
    case SchedulePolicy::kLongestPrefixMatch:
      return "lpm";
    case SchedulePolicy::kPriority:
      return "priority";
  }
  return "?";
}

std::string_view to_string(InstanceRole role) {
  switch (role) {
    case InstanceRole::kColocated:
      return "colocated";
    case InstanceRole::kPrefillOnly:
      return "prefill";
    case InstanceRole::kDecodeOnly:
      return "decode";
  }
  return "?";
}

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kQueueEmpty:
      return "queue_empty";
    case StopReason::kTokenBudget:
      return "token_budget";
    case StopReason::kKvPages:
      return "kv_pages";
    case StopReason::kMaxRunning:
      return "max_running";
    case StopReason::kLongPrefillAlone:
      return "long_prefill_alone";
    case StopReason::kPreempted:
      return "preempted";
    case StopReason::kKvEstimate:
      return "kv_estimate";
    case StopReason::kRetracted:
      return "retracted";
  }
  return "?";
}

namespace {
// One allocation holds the token times of most outputs; longer ones grow geometrically from there.
constexpr int64_t kTokenTimesReserve = 4096;

BatchEntry make_entry(const Request& r, bool prefill, int64_t context_tokens, int64_t new_tokens) {
  BatchEntry e;
  e.id = r.record.id;
  e.phase = prefill ? Phase::kPrefill : Phase::kDecode;
  e.new_tokens = new_tokens;
  e.context_tokens = context_tokens;
  e.draft_tokens = prefill ? 0 : static_cast<int32_t>(new_tokens - 1);
  e.last_chunk = prefill && context_tokens + new_tokens == r.prefill_target_tokens;
  return e;
}

}  // namespace

Scheduler::Scheduler(const SchedulerConfig& config, const KvConfig& kv, int32_t rank)
    : config_(config), kv_(kv), rank_(rank), new_token_ratio_(config.estimate.init_ratio) {
  // Configurations are validated at the edge (the CLI / job loader); these would stall every request.
  assert(config.max_batch_tokens > 0 && "max_batch_tokens must be positive");
  assert(config.max_running_requests > 0 && "max_running_requests must be positive");
  assert(config.mtp_draft_tokens >= 0 && "mtp_draft_tokens must be >= 0");
}

int64_t Scheduler::max_kv_tokens(const Request& r) const {
  // A prefill-only instance never decodes: it needs the prompt's KV only.
  return config_.role == InstanceRole::kPrefillOnly ? r.record.prompt_tokens : r.max_kv_tokens();
}

RejectReason Scheduler::validate(const RequestSpec& spec, bool kv_ready) const {
  if (spec.prompt_tokens <= 0) return RejectReason::kNonPositivePrompt;
  if (spec.output_tokens <= 0) return RejectReason::kNonPositiveOutput;
  if (spec.prompt_tokens > config_.max_context_tokens - spec.output_tokens)
    return RejectReason::kExceedsContext;
  if ((config_.role == InstanceRole::kDecodeOnly) != kv_ready) return RejectReason::kWrongRole;
  const int64_t kv_tokens = config_.role == InstanceRole::kPrefillOnly
                                ? spec.prompt_tokens
                                : spec.prompt_tokens + spec.output_tokens - 1;
  if (kv_.pages_for_tokens(kv_tokens) > kv_.config().total_pages) return RejectReason::kNeverFitsKv;
  if (kv_.window_pages_needed(-1, kv_tokens) > kv_.config().window.total_pages)
    return RejectReason::kNeverFitsKv;
  return RejectReason::kNone;
}

int32_t Scheduler::new_slot() {
  if (!free_slots_.empty()) {
    const int32_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  slots_.emplace_back();
  marked_.push_back(0);
  lpm_hints_.emplace_back();
  return static_cast<int32_t>(slots_.size() - 1);
}

RejectReason Scheduler::add(RequestSpec spec, double now_s, bool kv_ready) {
  const RejectReason reason = validate(spec, kv_ready);
  if (reason != RejectReason::kNone) return reason;
  const int32_t slot = new_slot();
  lpm_hints_[static_cast<size_t>(slot)] = PrefixMatch{};
  Request& r = slots_[static_cast<size_t>(slot)];
  r = Request{};
  r.record.id = spec.id;
  r.record.status = RequestStatus::kWaiting;
  r.record.rank = rank_;
  r.record.prompt_tokens = spec.prompt_tokens;
  r.record.output_tokens = spec.output_tokens;
  r.record.arrival_s = now_s;
  r.priority = spec.priority;
  if (kv_.config().prefix_cache && !kv_ready) r.page_keys = derive_page_keys(spec, kv_.config().page_tokens);
  r.prefill_target_tokens = spec.prompt_tokens;
  r.arrival_seq = arrivals_++;
  r.kv_ready = kv_ready;
  r.live = true;
  load_tokens_ += spec.prompt_tokens + spec.output_tokens;
  if (kv_ready) {
    // The first token came from the prefill instance with the KV. SGLang's decode worker streams it from
    // the request's prebuilt batch, which its overlapped loop builds when it next polls its transfers and
    // processes as the decode step after that ends (disaggregation/decode.py): here, with the first decode
    // step that runs the request. A one-token request never decodes: it is streamed and done on arrival.
    if (r.remaining_output() > 1) {
      r.record.generated_tokens = 1;
      r.first_token_held = true;
    } else {
      emit_tokens(r, 1, now_s);
    }
  }
  if (r.remaining_output() == 0) {
    complete(slot, RequestStatus::kFinished, now_s);  // a one-token request is done on arrival
    return RejectReason::kNone;
  }
  enqueue_waiting(slot);
  return RejectReason::kNone;
}

bool Scheduler::waiting_before(int32_t a, int32_t b) const {
  const Request& x = slots_[static_cast<size_t>(a)];
  const Request& y = slots_[static_cast<size_t>(b)];
  if (config_.policy == SchedulePolicy::kPriority && x.priority != y.priority) return x.priority > y.priority;
  return x.arrival_seq < y.arrival_seq;
}

void Scheduler::enqueue_waiting(int32_t slot) {
  // New arrivals normally belong at the back; a requeued (preempted) request goes back to its place.
  auto pos = std::upper_bound(waiting_.begin(), waiting_.end(), slot,
                              [this](int32_t a, int32_t b) { return waiting_before(a, b); });
  waiting_.insert(pos, slot);
}

void Scheduler::insert_running(int32_t slot) {
  // Running order is policy order: the oldest (or most urgent) first, so preemption victims from the
  // back are the newest (or least urgent) and the head always makes progress.
  auto pos = std::upper_bound(running_.begin(), running_.end(), slot,
                              [this](int32_t a, int32_t b) { return waiting_before(a, b); });
  running_.insert(pos, slot);
  if (slots_[static_cast<size_t>(slot)].prefilling()) ++running_prefills_;
}

int64_t Scheduler::kv_target_tokens(const Request& r, int64_t context_tokens, int64_t new_tokens) const {
  switch (kv_.config().reservation) {
    case ReservationPolicy::kWholeRequest:
      return max_kv_tokens(r);
    case ReservationPolicy::kIncremental:
    case ReservationPolicy::kEstimate:
      return context_tokens + new_tokens;
  }
  return context_tokens + new_tokens;
}

int64_t Scheduler::match_limit_pages(const Request& r) const {
  // At least one prompt token is always computed: its logits sample the next token.
  return std::min<int64_t>(static_cast<int64_t>(r.page_keys.size()),
                           (r.prefill_target_tokens - 1) / kv_.config().page_tokens);
}

int64_t Scheduler::cached_prefix_tokens(std::span<const uint64_t> keys) const {
  return kv_.match(keys, static_cast<int64_t>(keys.size())).pages * kv_.config().page_tokens;
}

int32_t Scheduler::decode_tokens(const Request& r) const {
  // Drafts never run past the output: KV then stays within prompt + output - 1 tokens.
  const int64_t drafts = std::min<int64_t>(config_.mtp_draft_tokens, r.remaining_output() - 1);
  return static_cast<int32_t>(1 + std::max<int64_t>(0, drafts));
}

int64_t Scheduler::prefill_cap(int64_t remaining, const Budget& budget) const {
  int64_t n = std::min(remaining, budget.tokens);
  if (config_.long_prefill_token_threshold > 0) n = std::min(n, config_.long_prefill_token_threshold);
  return n;
}

int32_t Scheduler::pick_victim(Budget& budget, size_t self_index) const {
  while (budget.victim_cursor > static_cast<int64_t>(self_index) &&
         marked_[static_cast<size_t>(running_[static_cast<size_t>(budget.victim_cursor)])] != 0)
    --budget.victim_cursor;
  // Only requests behind self in policy order are victims (those ahead are scheduled, or, under the solo
  // rule, more urgent); with none left, self is the victim.
  if (budget.victim_cursor <= static_cast<int64_t>(self_index)) return running_[self_index];
  return running_[static_cast<size_t>(budget.victim_cursor--)];
}

void Scheduler::plan_running(Batch& batch, RankDecision& decision, Budget& budget,
                             const PassFilter& pass) const {
  if (!pass.decode && running_prefills_ == 0) return;  // a prefill pass over decodes only: nothing to take
  for (size_t i = 0; i < running_.size(); ++i) {
    const int32_t slot = running_[i];
    if (marked_[static_cast<size_t>(slot)] != 0) continue;
    if (pass.only_slot >= 0 && slot != pass.only_slot) continue;
    const Request& r = slots_[static_cast<size_t>(slot)];
    const bool prefill = r.prefilling();
    if (prefill ? !pass.prefill : !pass.decode) continue;
    int64_t want =
        prefill ? prefill_cap(r.prefill_target_tokens - r.computed_tokens, budget) : decode_tokens(r);
    if (!prefill) want = std::min(want, budget.tokens);
    if (want <= 0) {
      decision.stop = StopReason::kTokenBudget;
      budget.tokens = 0;
      return;
    }
    if (prefill && estimating()) want = estimate_chunk(slot, r, want, budget);
    const int64_t target = kv_target_tokens(r, r.computed_tokens, want);
    const int64_t need = kv_.pages_needed(slot, target);
    const int64_t window_need = kv_.window_pages_needed(slot, target);
    bool self_preempted = false;
    while (need > budget.pages || window_need > budget.window_pages) {
      const int32_t victim = pick_victim(budget, i);
      marked_[static_cast<size_t>(victim)] = 1;
      decision.preemptions.push_back(victim);
      budget.pages += kv_.releasable_pages(victim);
      budget.window_pages += kv_.window_held_pages(victim);
      budget.preempted = true;
      ++budget.running;
      if (victim == slot) {
        self_preempted = true;
        break;
      }
    }
    if (self_preempted) continue;
    if (!prefill) budget.decode_reserve_pages = std::max<int64_t>(0, budget.decode_reserve_pages - need);
    budget.pages -= need;
    budget.window_pages -= window_need;
    budget.tokens -= want;
    decision.new_pages += need;
    batch.entries.push_back(make_entry(r, prefill, r.computed_tokens, want));
    decision.entry_slots.push_back(slot);
  }
}

bool Scheduler::lpm_active() const {
  return config_.policy == SchedulePolicy::kLongestPrefixMatch &&
         static_cast<int64_t>(waiting_.size()) <= config_.lpm_max_queue;
}

void Scheduler::lpm_order() const {
  order_scratch_.assign(waiting_.begin(), waiting_.end());
  key_scratch_.resize(slots_.size());
  for (int32_t slot : order_scratch_) {
    const Request& r = slots_[static_cast<size_t>(slot)];
    PrefixMatch& hint = lpm_hints_[static_cast<size_t>(slot)];
    hint = kv_.extend(r.page_keys, match_limit_pages(r), hint);
    key_scratch_[static_cast<size_t>(slot)] = hint.pages;
  }
  std::stable_sort(order_scratch_.begin(), order_scratch_.end(), [this](int32_t a, int32_t b) {
    return key_scratch_[static_cast<size_t>(a)] > key_scratch_[static_cast<size_t>(b)];
  });
}

void Scheduler::plan_waiting(Batch& batch, RankDecision& decision, Budget& budget,
                             const PassFilter& pass) const {
  if (budget.preempted) {
    decision.stop = budget.retracted ? StopReason::kRetracted : StopReason::kPreempted;
    return;
  }
  decision.stop = StopReason::kQueueEmpty;
  // Only a decode-only instance holds waiting requests whose KV is ready: elsewhere a decode pass has
  // nothing to take from the queue (and scanning it every decode step costs O(queue)).
  if (!pass.prefill && config_.role != InstanceRole::kDecodeOnly) return;
  const bool lpm = lpm_active();
  if (lpm) lpm_order();
  for (size_t i = 0; i < waiting_.size(); ++i) {
    const int32_t slot = lpm ? order_scratch_[i] : waiting_[i];
    if (pass.only_slot >= 0 && slot != pass.only_slot) continue;
    const Request& r = slots_[static_cast<size_t>(slot)];
    if (r.record.arrival_s >= pass.arrived_before_s) continue;
    if (r.kv_ready ? !pass.decode : !pass.prefill) continue;
    if (budget.running <= 0) {
      decision.stop = StopReason::kMaxRunning;
      return;
    }
    if (budget.tokens <= 0) {
      decision.stop = StopReason::kTokenBudget;
      return;
    }
    PlannedAdmission admission{slot,
                               r.kv_ready ? PrefixMatch{} : kv_.match(r.page_keys, match_limit_pages(r))};
    // Host-tier pages count as cached: the step loads them back instead of computing them.
    const int64_t cached = (admission.match.pages + admission.match.host_pages) * kv_.config().page_tokens;
    const int64_t context = r.kv_ready ? r.prefill_target_tokens : cached;
    // A KV-ready request decodes 1 + k tokens, fewer drafts when the step's budget is nearly spent.
    const int64_t want = r.kv_ready ? std::min<int64_t>(decode_tokens(r), budget.tokens)
                                    : prefill_cap(r.prefill_target_tokens - cached, budget);
    const bool estimated = estimating() && !r.kv_ready;
    if (estimated && !budget.estimate_known) {
      budget.estimate_tokens = budget.estimate_pages * kv_.config().page_tokens - estimated_running_tokens();
      budget.estimate_known = true;
    }
    if (estimated && estimate_refuses(r, cached, budget, decision)) {
      decision.stop = StopReason::kKvEstimate;
      return;
    }
    // Locking the matched prefix takes its unreferenced pages out of the evictable ones.
    const int64_t need = kv_.pages_for_tokens(kv_target_tokens(r, context, want)) - admission.match.pages +
                         admission.match.unreferenced_pages;
    const int64_t window_need = kv_.window_pages_needed(slot, kv_target_tokens(r, context, want));
    if (need > budget.pages - budget.decode_reserve_pages || window_need > budget.window_pages) {
      decision.stop = StopReason::kKvPages;
      return;
    }
    if (estimated) charge_estimate(r, cached, want, budget);
    budget.pages -= need;
    budget.window_pages -= window_need;
    budget.tokens -= want;
    --budget.running;
    decision.new_pages += need;
    batch.entries.push_back(make_entry(r, !r.kv_ready, context, want));
    if (admission.match.host_pages > 0) {
      batch.entries.back().host_load_tokens = admission.match.host_pages * kv_.config().page_tokens;
      batch.host_load_bytes += admission.match.host_pages * kv_.config().transfer_bytes_per_page();
    }
    decision.entry_slots.push_back(slot);
    decision.admissions.push_back(admission);
  }
}

void Scheduler::plan_pass(Batch& batch, RankDecision& decision, const PassFilter& pass) const {
  batch.rank = rank_;
  batch.entries.clear();
  batch.host_load_bytes = 0;
  decision.host_store_pages = kv_.pending_store_pages();
  batch.host_store_bytes = decision.host_store_pages * kv_.config().transfer_bytes_per_page();
  decision.host_async_store_pages = kv_.pending_async_store_pages();
  batch.host_async_store_bytes = decision.host_async_store_pages * kv_.config().transfer_bytes_per_page();
  decision.entry_slots.clear();
  decision.admissions.clear();
  decision.preemptions.clear();
  decision.retractions.clear();
  decision.new_pages = 0;
  decision.stop = StopReason::kQueueEmpty;
  decision.version = version_;
  Budget budget;
  budget.tokens = config_.max_batch_tokens;
  budget.pages = kv_.available_pages();
  budget.window_pages = kv_.window_free_pages();
  budget.running = config_.max_running_requests - static_cast<int64_t>(running_.size());
  // A linear-attention model's running requests each hold a state slot (state_pool.h): the free slots
  // bound admissions as the request limit does (SGLang: its req pool is the mamba pool's size).
  if (kv_.state().enabled()) budget.running = std::min(budget.running, kv_.state().free_slots());
  budget.victim_cursor = static_cast<int64_t>(running_.size()) - 1;
  if (estimating()) {
    if (pass.decode && pass.only_slot < 0) plan_retractions(decision, budget);
    budget.estimate_pages = budget.pages;
  }
  plan_running(batch, decision, budget, pass);
  if (decision.stop != StopReason::kTokenBudget || budget.preempted)
    plan_waiting(batch, decision, budget, pass);
  for (int32_t slot : decision.preemptions)
    marked_[static_cast<size_t>(slot)] = 0;  // marks live for one pass
}

int32_t Scheduler::solo_candidate(const Batch& batch, const RankDecision& decision) const {
  if (config_.solo_prefill_ratio <= 0 || batch.entries.size() < 2) return -1;
  const int64_t total = batch.total_tokens();
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    const BatchEntry& e = batch.entries[i];
    if (e.phase != Phase::kPrefill) continue;
    const Request& r = slots_[static_cast<size_t>(decision.entry_slots[i])];
    const int64_t remaining = r.prefill_target_tokens - e.context_tokens;
    const int64_t others = total - e.new_tokens;
    // Only a multi-step prefill qualifies: one that ends within this step's budget costs the others a step.
    if (remaining > config_.max_batch_tokens &&
        static_cast<double>(remaining) >= config_.solo_prefill_ratio * static_cast<double>(others))
      return decision.entry_slots[i];
  }
  return -1;
}

void Scheduler::plan(Batch& batch, RankDecision& decision, double arrived_before_s, bool hold_context) const {
  PassFilter pass;
  pass.arrived_before_s = arrived_before_s;
  if (hold_context) {
    pass.prefill = false;
    plan_pass(batch, decision, pass);
    return;
  }
  if (config_.mixed_batches) {
    plan_pass(batch, decision, pass);
  } else {
    // SGLang's alternation: a prefill step whenever some prefill can run, else a decode step. A prefill
    // step that must preempt for pages yields to decoding: decodes finish and free pages, while prefills
    // preempting each other under pressure would never end.
    pass.decode = config_.role == InstanceRole::kDecodeOnly;
    plan_pass(batch, decision, pass);
    const bool decoders = static_cast<int64_t>(running_.size()) > running_prefills_;
    if (batch.empty() || (!decision.preemptions.empty() && decoders)) {
      pass.decode = true;
      pass.prefill = false;
      plan_pass(batch, decision, pass);
    }
  }
  const int32_t solo = solo_candidate(batch, decision);
  if (solo < 0) return;
  // Alone, the long prefill takes a bigger chunk, which may not fit where its share did: keep the shared
  // plan then (replacing it by an empty one could repeat forever).
  pass.only_slot = solo;
  pass.prefill = true;
  plan_pass(solo_batch_, solo_decision_, pass);
  if (solo_batch_.empty()) return;
  std::swap(batch, solo_batch_);
  std::swap(decision, solo_decision_);
  decision.stop = StopReason::kLongPrefillAlone;
}

void Scheduler::allocate(const Batch& batch, const RankDecision& decision) {
  assert(decision.version == version_ && "allocation of a plan made against another state");
  assert(batch.entries.size() == decision.entry_slots.size());
  assert(!allocated_ && "a step allocated twice");
  for (int32_t slot : decision.preemptions) {
    const bool retraction = std::find(decision.retractions.begin(), decision.retractions.end(), slot) !=
                            decision.retractions.end();
    if (retraction)
      retract(slot);
    else
      preempt(slot);
  }
  if (estimating()) update_ratio(batch, decision);
  for (const PlannedAdmission& admission : decision.admissions) admit(admission);
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    const int32_t slot = decision.entry_slots[i];
    const Request& r = slots_[static_cast<size_t>(slot)];
    const BatchEntry& e = batch.entries[i];
    [[maybe_unused]] const bool ok = kv_.grow(slot, kv_target_tokens(r, e.context_tokens, e.new_tokens));
    assert(ok && "planned pages not available at commit");
  }
  allocated_ = true;
}

void Scheduler::commit(const Batch& batch, const RankDecision& decision,
                       std::span<const int32_t> accepted_drafts, double now_s) {
  if (!allocated_) allocate(batch, decision);
  allocated_ = false;
  bool any_done = false;
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    const int32_t accepted = i < accepted_drafts.size() ? accepted_drafts[i] : 0;
    any_done |= advance(decision.entry_slots[i], batch.entries[i], accepted, now_s);
  }
  if (any_done)
    std::erase_if(running_, [this](int32_t slot) {
      return slots_[static_cast<size_t>(slot)].record.status != RequestStatus::kRunning;
    });
  ++stop_counts_[static_cast<int>(decision.stop)];
  if (!batch.empty()) {
    ++steps_;
    kv_.take_pending_store(decision.host_store_pages);  // an empty step executes nothing: it waits on
    kv_.take_pending_async_store(decision.host_async_store_pages);
  }
  ++version_;
}

void Scheduler::admit(const PlannedAdmission& admission) {
  Request& r = slots_[static_cast<size_t>(admission.slot)];
  kv_.admit(admission.slot, admission.match, r.kv_ready ? 0 : r.prefill_target_tokens, r.page_keys);
  const int64_t cached = (admission.match.pages + admission.match.host_pages) * kv_.config().page_tokens;
  if (r.record.preemptions == 0) r.record.cached_tokens = cached;
  r.computed_tokens = r.kv_ready ? r.prefill_target_tokens : cached;
  r.record.status = RequestStatus::kRunning;
  auto it = std::find(waiting_.begin(), waiting_.end(), admission.slot);
  assert(it != waiting_.end() && "admission of a request that is not waiting");
  waiting_.erase(it);
  insert_running(admission.slot);
}

void Scheduler::emit_tokens(Request& r, int64_t n, double now_s) {
  n = std::min(n, r.remaining_output());
  const int64_t streamed = n + (r.first_token_held ? 1 : 0);
  r.first_token_held = false;
  if (streamed > 0 && r.record.first_token_s < 0) {
    r.record.first_token_s = now_s;
    r.record.token_times_s.reserve(static_cast<size_t>(std::min(r.record.output_tokens, kTokenTimesReserve)));
  }
  for (int64_t i = 0; i < streamed; ++i) r.record.token_times_s.push_back(now_s);
  r.record.generated_tokens += n;
}

bool Scheduler::advance(int32_t slot, const BatchEntry& entry, int32_t accepted, double now_s) {
  Request& r = slots_[static_cast<size_t>(slot)];
  if (entry.phase == Phase::kPrefill) {
    r.computed_tokens += entry.new_tokens;
    if (!r.prefilling()) --running_prefills_;
    if (!entry.last_chunk) return false;
    kv_.cache_pages(slot, r.page_keys);
    emit_tokens(r, 1, now_s);
    if (config_.role == InstanceRole::kPrefillOnly) {
      complete(slot, RequestStatus::kHandedOff, now_s);
      return true;
    }
  } else {
    const int64_t produced = 1 + std::clamp<int64_t>(accepted, 0, entry.draft_tokens);
    r.computed_tokens += produced;
    emit_tokens(r, produced, now_s);
  }
  if (r.remaining_output() > 0) return false;
  complete(slot, RequestStatus::kFinished, now_s);
  return true;
}

void Scheduler::complete(int32_t slot, RequestStatus status, double now_s) {
  Request& r = slots_[static_cast<size_t>(slot)];
  kv_.release(slot);
  r.record.status = status;
  r.record.finish_s = now_s;
  load_tokens_ -= r.record.prompt_tokens + r.record.output_tokens;
  if (status != RequestStatus::kCancelled) ++finished_;
  done_.push_back(slot);
}

bool Scheduler::abort(RequestId id, RequestStatus status, double now_s) {
  assert(!allocated_ && "abort between a step's allocation and its commit");
  assert(status == RequestStatus::kCancelled || status == RequestStatus::kFinished);
  auto is_id = [&](int32_t slot) { return slots_[static_cast<size_t>(slot)].record.id == id; };
  int32_t slot = -1;
  if (auto w = std::find_if(waiting_.begin(), waiting_.end(), is_id); w != waiting_.end()) {
    slot = *w;
    waiting_.erase(w);
  } else if (auto r = std::find_if(running_.begin(), running_.end(), is_id); r != running_.end()) {
    slot = *r;
    if (slots_[static_cast<size_t>(slot)].prefilling()) --running_prefills_;
    running_.erase(r);
  } else {
    return false;
  }
  complete(slot, status, now_s);
  ++version_;
  return true;
}

void Scheduler::preempt(int32_t slot) {
  Request& r = slots_[static_cast<size_t>(slot)];
  if (r.prefilling()) --running_prefills_;
  kv_.release(slot);
  // Recompute: the prompt and every token produced so far are prefilled again; the last chunk samples
  // the next token. A KV-ready (PD decode) request recomputes locally too.
  r.prefill_target_tokens = r.record.prompt_tokens + r.record.generated_tokens;
  r.computed_tokens = 0;
  r.kv_ready = false;
  r.record.status = RequestStatus::kWaiting;
  ++r.record.preemptions;
  ++preemptions_;
  running_.erase(std::find(running_.begin(), running_.end(), slot));
  enqueue_waiting(slot);
}

bool Scheduler::preempt_last() {
  assert(!allocated_ && "preemption between a step's allocation and its commit");
  if (running_.empty()) return false;
  preempt(running_.back());
  ++version_;
  return true;
}

int64_t Scheduler::evict_cached(int64_t pages) {
  assert(!allocated_ && "eviction between a step's allocation and its commit");
  ++version_;
  return kv_.evict(pages);
}

void Scheduler::drain(std::vector<RequestRecord>& out) {
  for (int32_t slot : done_) {
    Request& r = slots_[static_cast<size_t>(slot)];
    out.push_back(std::move(r.record));
    r = Request{};
    free_slots_.push_back(slot);
  }
  done_.clear();
}

SchedulerCounters Scheduler::counters() const {
  SchedulerCounters c;
  c.waiting = static_cast<int64_t>(waiting_.size());
  c.running = static_cast<int64_t>(running_.size());
  for (int32_t slot : running_) c.prefilling += slots_[static_cast<size_t>(slot)].prefilling() ? 1 : 0;
  c.decoding = c.running - c.prefilling;
  c.finished = finished_;
  c.preemptions = preemptions_;
  c.retractions = retractions_;
  c.steps = steps_;
  std::copy(std::begin(stop_counts_), std::end(stop_counts_), std::begin(c.stop_counts));
  return c;
}

bool Scheduler::check(std::string* why) const {
  auto fail = [why](std::string msg) {
    if (why) *why = "scheduler: " + std::move(msg);
    return false;
  };
  if (!kv_.check(why)) return false;
  int64_t load = 0;
  for (int32_t slot : waiting_) {
    const Request& r = slots_[static_cast<size_t>(slot)];
    if (r.record.status != RequestStatus::kWaiting) return fail("waiting request not in kWaiting");
    if (kv_.holds(slot)) return fail("waiting request holds pages");
    load += r.record.prompt_tokens + r.record.output_tokens;
  }
  for (int32_t slot : running_) {
    const Request& r = slots_[static_cast<size_t>(slot)];
    if (r.record.status != RequestStatus::kRunning) return fail("running request not in kRunning");
    if (kv_.held_pages(slot) < kv_.pages_for_tokens(r.computed_tokens))
      return fail("running request holds fewer pages than its KV");
    if (!r.prefilling() && r.computed_tokens != r.record.prompt_tokens + r.record.generated_tokens - 1)
      return fail("decoding request's KV != prompt + generated - 1");
    if (r.first_token_held && (r.record.first_token_s >= 0 || r.record.generated_tokens != 1))
      return fail("held first token after the first was streamed");
    load += r.record.prompt_tokens + r.record.output_tokens;
  }
  if (std::count_if(running_.begin(), running_.end(), [this](int32_t slot) {
        return slots_[static_cast<size_t>(slot)].prefilling();
      }) != running_prefills_)
    return fail("running prefill count disagrees");
  if (!std::is_sorted(running_.begin(), running_.end(),
                      [this](int32_t a, int32_t b) { return waiting_before(a, b); }))
    return fail("running order broken");
  if (load != load_tokens_) return fail("load counter disagrees");
  if (estimating() && (new_token_ratio_ < 0 || new_token_ratio_ > 1.0))
    return fail("new_token_ratio outside [0, 1]");
  for (int32_t slot : done_)
    if (kv_.holds(slot)) return fail("finished request holds pages");
  return true;
}

}  // namespace tokenline
