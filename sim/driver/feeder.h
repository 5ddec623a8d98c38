// Feeder: the drivers' arrival actor (DESIGN.md "Simulation driver"). It pulls requests from an
// ArrivalSource and hands each to the driver's dispatch callback: open loop at its trace time, or closed
// loop with at most `concurrency` sent and not yet left (the next goes when one leaves, as
// `vllm bench serve --max-concurrency`). All calls come from actors of one simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "common/input_error.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "workloads/arrival_source.h"

namespace tokenline {

class Feeder {
 public:
  using Dispatch = std::function<void(RequestSpec&& spec)>;  // at the current virtual time; may move spec

  // concurrency 0: open loop. Borrows the source, which must outlive the feeder.
  Feeder(ArrivalSource& source, int32_t concurrency, Dispatch dispatch)
      : source_(source), concurrency_(concurrency), dispatch_(std::move(dispatch)) {}

  // The actor body, called once: feeds until the source ends, then done(). An InputError from the source
  // ends feeding and is kept for input_error() (actor bodies must not throw).
  void run();
  // Closed loop: `requests` sent ones have left (completed or rejected); open loop: nothing. Wakes no one.
  void on_finished(int64_t requests = 1) { in_flight_ -= concurrency_ > 0 ? requests : 0; }
  // Wakes the feeder if it waits for a free slot (a spare wake-up only makes it look again).
  void wake();

  bool done() const { return done_; }
  int64_t in_flight() const { return in_flight_; }  // closed loop: sent and not yet left
  const std::optional<InputError>& input_error() const { return input_error_; }

 private:
  void feed_open_loop();
  void feed_closed_loop();

  ArrivalSource& source_;
  int32_t concurrency_;
  Dispatch dispatch_;
  std::unique_ptr<sg::Signal> signal_;  // made by run(), inside the simulation
  bool waiting_ = false;
  bool done_ = false;
  int64_t in_flight_ = 0;
  std::optional<InputError> input_error_;
};

}  // namespace tokenline
