#include "engine/runtime/request_feed.h"

#include <algorithm>

namespace tokenline {

void WorkloadFeed::take_until(double t_s, std::vector<TimedRequest>& out) {
  while (next_ < requests_.size() && requests_[next_].arrival_s <= t_s) out.push_back(requests_[next_++]);
}

bool WorkloadFeed::wait_next(Clock& clock, double* arrival_s) {
  if (next_ >= requests_.size()) return false;
  *arrival_s = requests_[next_].arrival_s;
  clock.sleep_until_s(*arrival_s);
  return true;
}

void SourceFeed::take_until(double t_s, std::vector<TimedRequest>& out) {
  last_s_ = std::max(last_s_, t_s);
  if (held_) {  // due at or before last_s_ <= t_s
    out.push_back(std::move(*held_));
    held_.reset();
  }
  TimedRequest a;
  while (source_.poll(t_s, a).due == ArrivalSource::Due::kNow) out.push_back(std::move(a));
}

bool SourceFeed::wait_next(Clock& clock, double* arrival_s) {
  TimedRequest a;
  const ArrivalSource::Poll p =
      held_ ? ArrivalSource::Poll{.due = ArrivalSource::Due::kNow} : source_.poll(last_s_, a);
  switch (p.due) {
    case ArrivalSource::Due::kNow:  // a turn made due by an answer since the last take_until
      if (!held_) held_ = std::move(a);
      *arrival_s = held_->arrival_s;
      return true;
    case ArrivalSource::Due::kAt:
      *arrival_s = p.at_s;
      clock.sleep_until_s(p.at_s);
      return true;
    case ArrivalSource::Due::kBlocked:  // nothing in the engine to answer: cannot go on
    case ArrivalSource::Due::kEnd:
      return false;
  }
  return false;
}

void SourceFeed::on_left(const RequestRecord& record, double now_s) {
  last_s_ = std::max(last_s_, now_s);
  source_.on_left(record, now_s);
}

bool LiveFeed::push(RequestSpec spec) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return false;
    queue_.push_back(TimedRequest{clock_.now_s(), std::move(spec)});
  }
  ready_.notify_one();
  return true;
}

void LiveFeed::close() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  ready_.notify_all();
}

void LiveFeed::take_until(double t_s, std::vector<TimedRequest>& out) {
  const std::lock_guard<std::mutex> lock(mutex_);
  while (!queue_.empty() && queue_.front().arrival_s <= t_s) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
}

bool LiveFeed::wait_next(Clock& /*clock*/, double* arrival_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this] { return closed_ || !queue_.empty(); });
  if (queue_.empty()) return false;
  *arrival_s = queue_.front().arrival_s;
  return true;
}

}  // namespace tokenline
