#include "engine/runtime/engine_clock.h"

#include <algorithm>

namespace tokenline {

// Adds every request that has arrived by t_s, each at its own arrival time (as the sim's feeder does).
void EngineClock::admit_until(double t_s) {
  arrived_.clear();
  feed_.take_until(t_s, arrived_);
  for (const TimedRequest& a : arrived_) admit_(a);
}

double EngineClock::now_s() {
  if (feed_.wall_time()) {  // live arrivals carry wall-clock stamps: no step may start before them
    now_s_ = std::max(now_s_, clock_.now_s());
    admit_until(now_s_);
  }
  return now_s_;
}

double EngineClock::sleep_until(double t_s) {
  now_s_ = std::max(now_s_, t_s);
  admit_until(now_s_);
  return now_s_;
}

bool EngineClock::wait_for_work() {
  double t_s = 0;
  if (!feed_.wait_next(clock_, &t_s)) return false;
  if (t_s > now_s_) now_s_ = t_s;
  admit_until(now_s_);
  return true;
}

}  // namespace tokenline
