// FakeClock: a Clock that advances a fixed tick on every read, so measured durations are deterministic.
#pragma once

#include "engine/runtime/clock.h"

namespace tokenline::test {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(double tick_s) : tick_s_(tick_s) {}
  double now_s() override { return t_s_ += tick_s_; }
  void sleep_until_s(double t_s) override {
    if (t_s > t_s_) t_s_ = t_s;
  }
  int64_t reads() const { return static_cast<int64_t>(t_s_ / tick_s_); }

 private:
  double tick_s_;
  double t_s_ = 0;
};

}  // namespace tokenline::test
