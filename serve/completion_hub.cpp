#include "serve/completion_hub.h"

#include <algorithm>
#include <cstdio>

namespace tokenline {
namespace {

// Where text may end without cutting a UTF-8 character: end, or the start of a trailing incomplete one.
size_t utf8_safe_end(const std::string& s, size_t end) {
  for (size_t back = 1; back <= 4 && back <= end; ++back) {
    const auto c = static_cast<unsigned char>(s[end - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back for its lead
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return back < need ? end - back : end;
  }
  return end;  // no lead within 4 bytes: invalid anyway, shown as U+FFFD
}

size_t longest(const std::vector<std::string>& stops) {
  size_t n = 0;
  for (const std::string& s : stops) n = std::max(n, s.size());
  return n;
}

double ms_between(double from_s, double to_s) {
  return from_s >= 0 && to_s >= 0 ? (to_s - from_s) * 1e3 : -1;
}

}  // namespace

std::string_view to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "null";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "abort";
    case FinishReason::kRejected:
      return "rejected";
    case FinishReason::kUnscheduled:
      return "unscheduled";
  }
  return "?";
}

bool CompletionGroup::all_done() const {
  return std::all_of(choices.begin(), choices.end(), [](const ChoiceState& c) { return c.done; });
}

std::shared_ptr<CompletionGroup> CompletionHub::open(const std::vector<ChoiceSpec>& choices,
                                                     std::vector<RequestSpec>& specs) {
  auto group = std::make_shared<CompletionGroup>();
  group->choices.resize(choices.size());
  const std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < choices.size(); ++i) {
    const RequestId id = next_id_++;
    group->choices[i].id = id;
    Live& live = live_[id];
    live.group = group;
    live.choice = i;
    live.spec = choices[i];
    RequestSpec spec;
    spec.id = id;
    spec.token_ids = choices[i].prompt;
    spec.prompt_tokens = static_cast<int64_t>(choices[i].prompt.size());
    spec.output_tokens = choices[i].max_tokens;
    specs.push_back(std::move(spec));
  }
  return group;
}

void CompletionHub::cancel(CompletionGroup& group) {
  std::vector<RequestId> ids;
  {
    // Group then hub, never both at once: the engine thread takes hub then group.
    const std::lock_guard<std::mutex> lock(group.mutex);
    for (const ChoiceState& c : group.choices)
      if (!c.done) ids.push_back(c.id);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  for (RequestId id : ids)
    if (auto it = live_.find(id); it != live_.end()) it->second.cancelled = true;
}

void CompletionHub::cancel_all() {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [id, live] : live_) live.cancelled = true;
}

int64_t CompletionHub::live() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(live_.size());
}

int32_t CompletionHub::choose(RequestId id, std::span<const float> logits, int32_t greedy) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(id);
  if (it == live_.end()) return greedy;
  Live& live = it->second;
  const int32_t token = sample_token(logits, live.spec.sampling, static_cast<uint64_t>(live.chosen), greedy);
  ++live.chosen;
  if (live.spec.sampling.logprobs >= 0)
    live.pending_logprobs.push_back(token_logprobs(logits, token, live.spec.sampling.logprobs));
  return token;
}

// Examines the tokens generated since the last step: EOS and stop strings end the choice.
void CompletionHub::take_tokens(Live& live, const std::vector<int32_t>& all) {
  const auto prompt = static_cast<int64_t>(live.spec.prompt.size());
  std::vector<int32_t> fresh;
  std::vector<TokenLogprobs> fresh_logprobs;
  while (prompt + live.seen_tokens < static_cast<int64_t>(all.size())) {
    const int32_t token = all[static_cast<size_t>(prompt + live.seen_tokens)];
    ++live.seen_tokens;
    const bool has_logprob = !live.pending_logprobs.empty();
    TokenLogprobs logprob;
    if (has_logprob) {
      logprob = std::move(live.pending_logprobs.front());
      live.pending_logprobs.pop_front();
    }
    if (live.finish != FinishReason::kNone) continue;  // MTP tokens of the step after a stop
    fresh.push_back(token);
    if (has_logprob) fresh_logprobs.push_back(std::move(logprob));
    if (tokenizer_.is_eos(token) && !live.spec.ignore_eos) {
      live.finish = FinishReason::kStop;
      continue;
    }
    const size_t before = live.raw.size();
    live.raw += tokenizer_.token_bytes(token);
    size_t cut = std::string::npos;
    for (const std::string& stop : live.spec.stop) {
      const size_t from = before >= stop.size() ? before - stop.size() + 1 : 0;
      cut = std::min(cut, live.raw.find(stop, from));
    }
    if (cut != std::string::npos) {
      live.raw.resize(cut);
      live.finish = FinishReason::kStop;
    }
  }
  publish(live, live.finish != FinishReason::kNone, std::move(fresh), std::move(fresh_logprobs));
}

void CompletionHub::publish(Live& live, bool final_flush, std::vector<int32_t> tokens,
                            std::vector<TokenLogprobs> logprobs) {
  size_t safe = live.raw.size();
  if (!final_flush) {
    const size_t hold = live.spec.stop.empty() ? 0 : longest(live.spec.stop) - 1;
    safe = utf8_safe_end(live.raw, safe > hold ? safe - hold : 0);
  }
  safe = std::max(safe, live.published_bytes);
  std::string text = live.raw.substr(live.published_bytes, safe - live.published_bytes);
  live.published_bytes = safe;
  if (text.empty() && tokens.empty()) return;
  CompletionGroup& group = *live.group;
  {
    const std::lock_guard<std::mutex> lock(group.mutex);
    ChoiceState& c = group.choices[live.choice];
    c.text += text;
    c.tokens.insert(c.tokens.end(), tokens.begin(), tokens.end());
    for (TokenLogprobs& l : logprobs) c.logprobs.push_back(std::move(l));
  }
  group.changed.notify_all();
}

void CompletionHub::after_step(const StepPlan& plan, const ModelRunner& runner, Instance& instance,
                               double now_s) {
  std::vector<RequestId> stops, cancels;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Batch& batch : plan.batches.ranks) {
      for (const BatchEntry& e : batch.entries) {
        auto it = live_.find(e.id);
        const std::vector<int32_t>* tokens = runner.tokens(e.id);
        if (it == live_.end() || tokens == nullptr) continue;
        take_tokens(it->second, *tokens);
        if (it->second.finish == FinishReason::kStop) stops.push_back(e.id);
      }
    }
    for (const auto& [id, live] : live_)
      if (live.cancelled) cancels.push_back(id);
  }
  for (RequestId id : stops) instance.abort(id, RequestStatus::kFinished, now_s);
  for (RequestId id : cancels) instance.abort(id, RequestStatus::kCancelled, now_s);
}

void CompletionHub::on_record(const RequestRecord& record) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(record.id);
  if (it == live_.end()) return;
  Live& live = it->second;
  FinishReason reason = FinishReason::kUnscheduled;
  switch (record.status) {
    case RequestStatus::kFinished:
    case RequestStatus::kHandedOff:
      reason = live.finish == FinishReason::kStop ? FinishReason::kStop : FinishReason::kLength;
      break;
    case RequestStatus::kCancelled:
      reason = FinishReason::kAbort;
      break;
    case RequestStatus::kRejected:
      reason = FinishReason::kRejected;
      break;
    case RequestStatus::kWaiting:
    case RequestStatus::kRunning:
      reason = FinishReason::kUnscheduled;
      break;
  }
  publish(live, true, {}, {});
  CompletionGroup& group = *live.group;
  {
    const std::lock_guard<std::mutex> group_lock(group.mutex);
    ChoiceState& c = group.choices[live.choice];
    c.finish = reason;
    c.record = record;
    c.done = true;
  }
  group.changed.notify_all();
  metrics_.on_finished(record, to_string(reason));
  log_record(record, reason);
  live_.erase(it);
}

void CompletionHub::abandon_pending() {
  std::vector<RequestRecord> left;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, live] : live_) {
      RequestRecord r;
      r.id = id;
      r.prompt_tokens = static_cast<int64_t>(live.spec.prompt.size());
      r.output_tokens = live.spec.max_tokens;
      left.push_back(r);  // status kWaiting: never scheduled
    }
  }
  for (const RequestRecord& r : left) on_record(r);
}

// One line per finished request on stderr, as an operator greps it.
void CompletionHub::log_record(const RequestRecord& r, FinishReason reason) const {
  std::fprintf(stderr,
               "tokenline serve: request %lld %s prompt=%lld cached=%lld generated=%lld ttft_ms=%.1f "
               "e2e_ms=%.1f preemptions=%d\n",
               static_cast<long long>(r.id), std::string(to_string(reason)).c_str(),
               static_cast<long long>(r.prompt_tokens), static_cast<long long>(r.cached_tokens),
               static_cast<long long>(r.generated_tokens), ms_between(r.arrival_s, r.first_token_s),
               ms_between(r.arrival_s, r.finish_s), r.preemptions);
}

}  // namespace tokenline
