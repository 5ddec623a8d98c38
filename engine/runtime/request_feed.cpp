#include "engine/runtime/request_feed.h"

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
