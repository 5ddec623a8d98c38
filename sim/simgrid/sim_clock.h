// SimClock: the instance loop's clock in simulation (engine/core/instance_loop.h's LoopClock over
// SimGrid's virtual time). An idle instance actor waits on a signal that the driver raises (wake) when
// work may have come; it ends instead of waiting once the driver's `finished` predicate holds. One per
// instance actor; every call from inside the running simulation.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "engine/core/instance_loop.h"
#include "sim/simgrid/simgrid_adapter.h"

namespace tokenline {

class SimClock final : public LoopClock {
 public:
  // finished: true when no work will come to this actor any more (checked before each wait).
  explicit SimClock(std::function<bool()> finished) : finished_(std::move(finished)) {}

  double now_s() override { return sg::now_s(); }
  // Sleeps the rest of the way to t_s: a cost model's step (analytic, replay) passes here; the simgrid
  // backend's activities have already advanced the clock to the step's end.
  double sleep_until(double t_s) override;
  bool wait_for_work() override;
  // Wakes the actor if it waits (a spare wake-up only makes it look again).
  void wake();

 private:
  std::function<bool()> finished_;
  std::unique_ptr<sg::Signal> signal_;  // made at the first wait, inside the simulation
  bool waiting_ = false;
};

}  // namespace tokenline
