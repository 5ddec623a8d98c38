// FakeClock: a Clock that advances a fixed tick on every read, so measured durations are deterministic.
// A fork starts at the parent's time and ticks on its own (one per rank thread).
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
  std::unique_ptr<Clock> fork() override {
    auto child = std::make_unique<FakeClock>(tick_s_);
    child->t_s_ = t_s_;
    return child;
  }
  int64_t reads() const { return static_cast<int64_t>(t_s_ / tick_s_); }

 private:
  double tick_s_;
  double t_s_ = 0;
};

}  // namespace tokenline::test
