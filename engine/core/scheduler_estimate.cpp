// Scheduler, ReservationPolicy::kEstimate: SGLang's admission on an estimated future token need and its
// retraction of decodes when KV runs out (SchedulerConfig::estimate; sources in engine_behavior.h).
// Read from SGLang 0.5.x: schedule_policy.py PrefillAdder (rem_total_tokens, add_one_req), scheduler.py
// update_running_batch (ratio decay, retraction) and schedule_batch.py retract_decode (victim order, the
// headroom it leaves, the ratio it restarts from).
#include <algorithm>
#include <vector>

#include "engine/core/scheduler.h"
#include "engine/core/scheduler_budget.h"

namespace tokenline {

int64_t Scheduler::clipped_output(const Request& r) const {
  return std::min(r.remaining_output(), config_.estimate.clip_output_tokens);
}

int64_t Scheduler::estimated_running_tokens() const {
  // What the running requests are expected to still write: their remaining prompt in full (SGLang's
  // chunked request) and new_token_ratio of their (clipped) remaining output.
  double tokens = 0;
  for (int32_t slot : running_) {
    if (marked_[static_cast<size_t>(slot)] != 0) continue;  // retracted in this plan
    const Request& r = slots_[static_cast<size_t>(slot)];
    tokens += double(r.prefill_target_tokens - std::min(r.computed_tokens, r.prefill_target_tokens));
    tokens += new_token_ratio_ * double(clipped_output(r));
  }
  return static_cast<int64_t>(tokens);
}

int64_t Scheduler::estimate_chunk(int32_t slot, const Request& r, int64_t want, const Budget& budget) const {
  // A running prefill's chunk takes only pages the decodes do not need, shrinking to fit (SGLang truncates
  // its chunked request to the tokens left); with none left it keeps `want` and plan_running preempts, so
  // work always moves.
  const int64_t pages = std::max<int64_t>(0, budget.pages - budget.decode_reserve_pages);
  const int64_t fit = (kv_.held_pages(slot) + pages) * kv_.config().page_tokens - r.computed_tokens;
  return fit > 0 ? std::min(want, fit) : want;
}

bool Scheduler::estimate_refuses(const Request& r, int64_t cached, const Budget& budget,
                                 const RankDecision& decision) const {
  // An idle rank admits its head whatever the estimate (a request that validate() let in always can run
  // alone), so a prompt + output near the pool size cannot wait forever.
  if (running_.empty() && decision.admissions.empty()) return false;
  return r.prefill_target_tokens - cached + clipped_output(r) >= budget.estimate_tokens;
}

void Scheduler::charge_estimate(const Request& r, int64_t cached, int64_t want, Budget& budget) const {
  // SGLang charges the chunk (page-rounded) and, when it completes the prompt, the clipped output.
  const bool completes = want == r.prefill_target_tokens - cached;
  budget.estimate_tokens -=
      kv_.pages_for_tokens(want) * kv_.config().page_tokens + (completes ? clipped_output(r) : 0);
}

void Scheduler::plan_retractions(RankDecision& decision, Budget& budget) const {
  std::vector<int32_t>& keep = retract_scratch_;
  keep.clear();
  int64_t need = 0;  // pages the next decode step of the kept decodes needs
  for (int32_t slot : running_) {
    const Request& r = slots_[static_cast<size_t>(slot)];
    if (marked_[static_cast<size_t>(slot)] != 0 || r.prefilling()) continue;
    keep.push_back(slot);
    need += kv_.pages_needed(slot, r.computed_tokens + decode_tokens(r));
  }
  budget.decode_reserve_pages = need;
  if (need <= budget.pages) return;
  // SGLang keeps the requests that have generated the most and, among equals, the shortest prompts: the
  // victims (from the back) are the newest decodes, longest prompt first. Arrival order breaks ties.
  std::sort(keep.begin(), keep.end(), [this](int32_t a, int32_t b) {
    const RequestRecord& x = slots_[static_cast<size_t>(a)].record;
    const RequestRecord& y = slots_[static_cast<size_t>(b)].record;
    if (x.generated_tokens != y.generated_tokens) return x.generated_tokens > y.generated_tokens;
    if (x.prompt_tokens != y.prompt_tokens) return x.prompt_tokens < y.prompt_tokens;
    return slots_[static_cast<size_t>(a)].arrival_seq < slots_[static_cast<size_t>(b)].arrival_seq;
  });
  const int64_t headroom = config_.estimate.retract_headroom_tokens;
  const int64_t page_tokens = kv_.config().page_tokens;
  auto short_of_room = [&] {
    return need > budget.pages || budget.pages * page_tokens < headroom * static_cast<int64_t>(keep.size());
  };
  // At least one goes (the step lacked pages); the last decode is never retracted (SGLang's corner case):
  // if it still lacks pages, plan_running preempts as in kIncremental.
  while (keep.size() > 1 && (decision.retractions.empty() || short_of_room())) {
    const int32_t victim = keep.back();
    keep.pop_back();
    const Request& r = slots_[static_cast<size_t>(victim)];
    need -= kv_.pages_needed(victim, r.computed_tokens + decode_tokens(r));
    budget.pages += kv_.releasable_pages(victim);
    ++budget.running;
    marked_[static_cast<size_t>(victim)] = 1;
    decision.preemptions.push_back(victim);  // drivers report every requeue from preemptions
    decision.retractions.push_back(victim);
  }
  budget.decode_reserve_pages = need;
  budget.preempted = budget.retracted = !decision.retractions.empty();
}

void Scheduler::retract(int32_t slot) {
  Request& r = slots_[static_cast<size_t>(slot)];
  ++r.record.retractions;
  ++retractions_;
  preempt(slot);
}

void Scheduler::update_ratio(const Batch& batch, const RankDecision& decision) {
  const EstimateConfig& e = config_.estimate;
  if (!decision.retractions.empty()) {
    // Restart from what the decodes left have produced plus the headroom the retraction left each.
    int64_t generated = 0;
    int64_t requested = 0;
    int64_t kept = 0;
    for (int32_t slot : running_) {
      const Request& r = slots_[static_cast<size_t>(slot)];
      if (r.prefilling()) continue;
      generated += r.record.generated_tokens;
      requested += r.record.output_tokens;
      ++kept;
    }
    if (requested > 0) {
      const double ratio = double(generated + e.retract_headroom_tokens * kept) / double(requested);
      new_token_ratio_ = std::min(ratio, 1.0);  // may sit below min_ratio until the next decay step
    }
    return;
  }
  if (batch.decode_requests() > 0) new_token_ratio_ = std::max(new_token_ratio_ - e.ratio_decay, e.min_ratio);
}

}  // namespace tokenline
