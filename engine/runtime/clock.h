// Clock: the runtime's one seam to wall time (the only layer where a wall clock is legitimate). The model
// runner times its ops with it and the run loop waits for arrivals with it; tests inject a fake clock so
// timings, and so every decision that depends on them, are deterministic.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>

namespace tokenline {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now_s() = 0;                  // seconds since the clock's origin, monotonic
  virtual void sleep_until_s(double t_s) = 0;  // returns at once when t_s has passed
  // A clock for another thread, reading the same time as this one now; the model runner times each
  // rank's thread with its own fork and then sleeps this clock until the last rank's end.
  virtual std::unique_ptr<Clock> fork() = 0;
};

// std::chrono::steady_clock with its origin at construction.
class SteadyClock final : public Clock {
 public:
  SteadyClock();
  // Moves the origin to now: times read afterwards start from 0 (and clocks forked afterwards with them).
  void restart();
  double now_s() override;
  void sleep_until_s(double t_s) override;
  std::unique_ptr<Clock> fork() override { return std::make_unique<SteadyClock>(*this); }

 private:
  int64_t origin_ns_ = 0;
};

constexpr double kNanosecondsPerSecond = 1e9;

// Measured times are whole nanoseconds: trace.json stores microseconds with 3 decimals, so a replay
// reads back exactly the durations the run advanced its clock by.
inline int64_t to_whole_ns(double s) {
  return std::llround(s * kNanosecondsPerSecond);
}
inline double ns_to_s(int64_t ns) {
  return static_cast<double>(ns) / kNanosecondsPerSecond;
}

}  // namespace tokenline
