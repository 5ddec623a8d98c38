// EngineClock: the instance loop's clock in the real engine (engine/core/instance_loop.h's LoopClock).
// Its time is the engine clock: it advances by each step's measured duration (the runner's StepOutcome,
// scheduling and recording between steps not counted) and, while the instance is idle, waits in wall time
// (the runtime's Clock) for the feed's next arrival and jumps to it. Requests join as the clock passes
// their arrival times, each at its own time - those that arrive while a step executes before that step's
// commit, the same order of events as the simulation's - so a replay of the measured durations
// reproduces every decision. Under live arrivals (RequestFeed::wall_time) a step does not start before
// the wall clock: now_s() catches up with it first.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "engine/core/instance_loop.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/request_feed.h"

namespace tokenline {

class EngineClock final : public LoopClock {
 public:
  using Admit = std::function<void(const TimedRequest& request)>;  // joins one request to the instance

  // REQUIRES: clock and feed outlive this.
  EngineClock(Clock& clock, RequestFeed& feed, Admit admit)
      : clock_(clock), feed_(feed), admit_(std::move(admit)) {}

  double now_s() override;
  double sleep_until(double t_s) override;
  bool wait_for_work() override;
  double time_s() const { return now_s_; }  // the engine clock, without catching up with the wall

 private:
  void admit_until(double t_s);

  Clock& clock_;
  RequestFeed& feed_;
  Admit admit_;
  std::vector<TimedRequest> arrived_;
  double now_s_ = 0;
};

}  // namespace tokenline
