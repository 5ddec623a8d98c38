#include "sim/driver/feeder.h"

namespace tokenline {

void Feeder::run() {
  signal_ = std::make_unique<sg::Signal>();
  try {
    if (concurrency_ > 0) {
      feed_closed_loop();
    } else {
      feed_open_loop();
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
    dispatch_(std::move(a.spec));
  }
}

void Feeder::feed_closed_loop() {
  TimedRequest a;
  while (true) {
    while (in_flight_ < concurrency_) {
      if (!source_.next(a)) return;
      ++in_flight_;  // before dispatch: a request rejected inside it leaves at once
      dispatch_(std::move(a.spec));
    }
    waiting_ = true;
    signal_->wait();
  }
}

void Feeder::wake() {
  if (!waiting_) return;
  waiting_ = false;
  signal_->notify();
}

}  // namespace tokenline
