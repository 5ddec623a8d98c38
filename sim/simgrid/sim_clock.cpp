#include "sim/simgrid/sim_clock.h"

namespace tokenline {

double SimClock::sleep_until(double t_s) {
  const double now = sg::now_s();
  if (t_s > now) sg::sleep_for(t_s - now);
  return sg::now_s();
}

bool SimClock::wait_for_work() {
  if (finished_()) return false;
  if (!signal_) signal_ = std::make_unique<sg::Signal>();
  waiting_ = true;
  signal_->wait();
  return true;
}

void SimClock::wake() {
  if (!waiting_) return;
  waiting_ = false;
  signal_->notify();
}

}  // namespace tokenline
