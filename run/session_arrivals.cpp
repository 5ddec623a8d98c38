#include "run/session_arrivals.h"

#include <cassert>
#include <utility>

#include "workloads/block_hash.h"

namespace tokenline {

SessionArrivals::SessionArrivals(std::unique_ptr<SessionSource> source, int32_t clients)
    : source_(std::move(source)), clients_(clients) {
  assert(clients >= 0 && "a client count is not negative");
}

void SessionArrivals::make_request(Live& live, double sent_s, TimedRequest& out) {
  const SessionScript& s = live.script;
  const SessionTurn& turn = s.turns[live.next_turn];
  const int64_t prompt = live.history_tokens + turn.new_tokens;
  out.arrival_s = sent_s;
  RequestSpec& spec = out.spec;
  spec.id = next_id_++;
  spec.prompt_tokens = prompt;
  spec.output_tokens = turn.output_tokens;
  spec.priority = 0;
  spec.token_ids.clear();
  spec.block_tokens = kSessionBlockTokens;
  spec.block_hashes.clear();
  const int64_t b = kSessionBlockTokens;
  const int64_t blocks = (prompt + b - 1) / b;
  spec.block_hashes.reserve(static_cast<size_t>(blocks));
  for (int64_t j = 0; j < blocks; ++j) {
    const auto block = static_cast<uint64_t>(j);
    const bool full = (j + 1) * b <= prompt;
    int64_t h = 0;
    if (full && s.prefix_group >= 0 && (j + 1) * b <= s.prefix_tokens)
      h = block_hash(BlockOwner::kPrefixGroup, static_cast<uint64_t>(s.prefix_group), block);
    else if (full)
      h = block_hash(BlockOwner::kSession, static_cast<uint64_t>(s.index), block);
    else
      h = block_hash(BlockOwner::kRequest, static_cast<uint64_t>(spec.id), block);
    spec.block_hashes.push_back(static_cast<uint64_t>(h));
  }
  ++counters_.turns_sent;
}

bool SessionArrivals::next(TimedRequest& out) {
  while (!listing_ || listing_->next_turn == listing_->script.turns.size()) {
    std::optional<SessionScript> s = source_->next();
    if (!s) return false;
    listing_ = Live{.script = std::move(*s)};
    listing_->history_tokens = listing_->script.prefix_tokens;
    listing_s_ = listing_->script.start_s;
  }
  Live& live = *listing_;
  const SessionTurn& turn = live.script.turns[live.next_turn];
  listing_s_ += turn.think_s;
  make_request(live, listing_s_, out);
  live.history_tokens += turn.new_tokens + turn.output_tokens;
  ++live.next_turn;
  return true;
}

void SessionArrivals::admit(double now_s) {
  while (clients_ == 0 || static_cast<int64_t>(live_.size()) < clients_) {
    if (!upcoming_ && !source_done_) {
      upcoming_ = source_->next();
      source_done_ = !upcoming_;
    }
    if (!upcoming_) return;
    const int64_t index = upcoming_->index;
    Live live{.script = std::move(*upcoming_)};
    upcoming_.reset();
    live.history_tokens = live.script.prefix_tokens;
    const double start_s = live.script.start_s > now_s ? live.script.start_s : now_s;
    live_.emplace(index, std::move(live));
    due_.push(DueTurn{.due_s = start_s, .order = dues_++, .session = index});
    ++counters_.started;
    // Without a cap, sessions start at their own times: read no further than the one after now.
    if (clients_ == 0 && start_s > now_s) return;
  }
}

ArrivalSource::Poll SessionArrivals::poll(double now_s, TimedRequest& out) {
  admit(now_s);
  if (!due_.empty()) {
    const DueTurn d = due_.top();
    if (d.due_s > now_s) return {.due = ArrivalSource::Due::kAt, .at_s = d.due_s};
    due_.pop();
    Live& live = live_.at(d.session);
    make_request(live, d.due_s, out);
    in_flight_.emplace(out.spec.id, d.session);
    return {.due = ArrivalSource::Due::kNow};
  }
  if (!live_.empty()) return {.due = ArrivalSource::Due::kBlocked};
  return {.due = ArrivalSource::Due::kEnd};
}

void SessionArrivals::end_session(int64_t session, bool completed) {
  live_.erase(session);
  ++(completed ? counters_.completed : counters_.abandoned);
}

void SessionArrivals::on_left(const RequestRecord& record, double now_s) {
  const auto it = in_flight_.find(record.id);
  if (it == in_flight_.end()) return;  // not one of ours (cannot happen: ids are ours)
  const int64_t session = it->second;
  in_flight_.erase(it);
  Live& live = live_.at(session);
  if (record.status != RequestStatus::kFinished) {
    end_session(session, false);
    return;
  }
  const SessionTurn& turn = live.script.turns[live.next_turn];
  live.history_tokens += turn.new_tokens + turn.output_tokens;
  if (++live.next_turn == live.script.turns.size()) {
    end_session(session, true);
    return;
  }
  due_.push(DueTurn{
      .due_s = now_s + live.script.turns[live.next_turn].think_s, .order = dues_++, .session = session});
}

}  // namespace tokenline
