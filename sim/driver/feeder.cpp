#include "sim/driver/feeder.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace tokenline {

void Feeder::run() {
  signal_ = std::make_unique<sg::Signal>();
  try {
    if (source_.reacts_to_completions()) {
      feed_reactive();
    } else if (concurrency_ > 0) {
      latency_mean_s_ > 0 ? feed_closed_loop_delayed() : feed_closed_loop();
    } else {
      latency_mean_s_ > 0 ? feed_open_loop_delayed() : feed_open_loop();
    }
  } catch (const InputError& e) {
    input_error_ = e;  // the driver reports it after the run and discards the outputs
  }
  done_ = true;
}

void Feeder::feed_open_loop() {
  TimedRequest a;
  while (source_.next(a)) {
    if (a.arrival_s > sg::now_s()) sg::sleep_until(a.arrival_s);
    dispatch_(std::move(a.spec), sg::now_s());
  }
}

void Feeder::feed_closed_loop() {
  TimedRequest a;
  while (true) {
    while (in_flight_ < concurrency_ && !warmup_draining()) {
      if (!source_.next(a)) return;
      ++in_flight_;  // before dispatch: a request rejected inside it leaves at once
      ++issued_;
      dispatch_(std::move(a.spec), sg::now_s());
    }
    waiting_ = true;
    signal_->wait();
  }
}

void Feeder::send(RequestSpec&& spec, double sent_s) {
  on_the_way_.push_back(OnTheWay{.reach_s = sent_s + rng_.exponential(latency_mean_s_),
                                 .sent_s = sent_s,
                                 .order = sends_++,
                                 .spec = std::move(spec)});
  std::push_heap(on_the_way_.begin(), on_the_way_.end(), std::greater<>());
}

bool Feeder::deliver_due() {
  if (on_the_way_.empty() || on_the_way_.front().reach_s > sg::now_s()) return false;
  std::pop_heap(on_the_way_.begin(), on_the_way_.end(), std::greater<>());
  OnTheWay w = std::move(on_the_way_.back());
  on_the_way_.pop_back();
  dispatch_(std::move(w.spec), w.sent_s);
  return true;
}

// Requests go on their way at their trace times and reach the engine in order of arrival there.
void Feeder::feed_open_loop_delayed() {
  TimedRequest a;
  bool more = source_.next(a);
  while (more || !on_the_way_.empty()) {
    if (more && (on_the_way_.empty() || a.arrival_s <= on_the_way_.front().reach_s)) {
      if (a.arrival_s > sg::now_s()) sg::sleep_until(a.arrival_s);
      send(std::move(a.spec), sg::now_s());
      more = source_.next(a);
    } else if (!deliver_due()) {
      sg::sleep_until(on_the_way_.front().reach_s);
    }
  }
}

// Each client sends its next request when its last one leaves (on_finished); the feeder wakes for those
// sends and for the first arrival due at the engine. Slots freed while the warm-up drains send when the
// last warm-up request has left.
void Feeder::feed_closed_loop_delayed() {
  free_since_.assign(size_t(concurrency_), sg::now_s());
  TimedRequest a;
  bool more = true;
  while (true) {
    if (!warmup_draining()) {
      if (issued_ == warmup_ && warmup_ > 0 && !free_since_.empty())
        std::fill(free_since_.begin(), free_since_.end(), sg::now_s());  // the measured phase starts now
      size_t used = 0;
      for (; more && used < free_since_.size() && !warmup_draining(); ++used) {
        more = source_.next(a);
        if (!more) break;
        ++in_flight_;
        ++issued_;
        send(std::move(a.spec), free_since_[used]);
      }
      free_since_.erase(free_since_.begin(), free_since_.begin() + std::ptrdiff_t(used));
    }
    if (deliver_due()) continue;
    if (on_the_way_.empty() && !more) return;
    waiting_ = true;
    if (on_the_way_.empty()) {
      signal_->wait();
    } else {
      signal_->wait_until(on_the_way_.front().reach_s);
    }
    waiting_ = false;
  }
}

// Sends what the source has due, then sleeps until the next due time, the next arrival at the engine, or a
// request leaving (which may make a session's next turn due: wake()).
void Feeder::feed_reactive() {
  TimedRequest a;
  while (true) {
    const ArrivalSource::Poll p = source_.poll(sg::now_s(), a);
    if (p.due == ArrivalSource::Due::kNow) {
      if (latency_mean_s_ > 0) {
        send(std::move(a.spec), a.arrival_s);
      } else {
        dispatch_(std::move(a.spec), a.arrival_s);
      }
      continue;
    }
    if (deliver_due()) continue;
    if (p.due == ArrivalSource::Due::kEnd && on_the_way_.empty()) return;
    double until_s = p.due == ArrivalSource::Due::kAt ? p.at_s : std::numeric_limits<double>::infinity();
    if (!on_the_way_.empty()) until_s = std::min(until_s, on_the_way_.front().reach_s);
    waiting_ = true;
    if (until_s < std::numeric_limits<double>::infinity()) {
      signal_->wait_until(until_s);
    } else {
      signal_->wait();
    }
    waiting_ = false;
  }
}

void Feeder::on_finished(std::span<const RequestRecord> records) {
  if (source_.reacts_to_completions()) {
    for (const RequestRecord& r : records) source_.on_left(r, sg::now_s());
    return;
  }
  on_finished(static_cast<int64_t>(records.size()));
}

void Feeder::on_finished(int64_t requests) {
  if (concurrency_ == 0) return;
  in_flight_ -= requests;
  if (latency_mean_s_ > 0) free_since_.insert(free_since_.end(), size_t(requests), sg::now_s());
}

void Feeder::wake() {
  if (!waiting_) return;
  waiting_ = false;
  signal_->notify();
}

}  // namespace tokenline
