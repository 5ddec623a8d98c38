// Feeder: the drivers' arrival actor (docs/architecture.md "Simulation driver"). It pulls requests from an
// ArrivalSource and hands each to the driver's dispatch callback: open loop at its trace time, or closed
// loop with at most `concurrency` sent and not yet left (the next goes when one leaves, as
// `vllm bench serve --max-concurrency`).
// Request latency: with a mean latency_s > 0 a request reaches the engine an exponential time of that mean
// after it is sent (its own path through the HTTP server, tokenizer and hand-off to the scheduler, plus
// the first token's way back: a pure delay per request, never a queue), drawn from the seed's "request
// latency" stream; its spread varies when equal requests of a closed loop reach the engine (it does not by
// itself undo the grouping that long prefill steps cause: docs/validation.md). dispatch gets the send
// time, which the outputs record as the arrival.
// latency_s 0: every request reaches the engine when sent.
// Warm-up phase (closed loop, warmup > 0): the first `warmup` requests run as a phase of their own; the
// next is sent only when all of them have left, and then as many at once as there are clients - aiperf's
// protocol (`--warmup-request-count`: "waits for all warmup responses before starting profiling"), so the
// measured phase opens with a burst of `concurrency` prompts as a benchmark's does.
// Closed-loop sources (ArrivalSource::reacts_to_completions(): multi-turn sessions): the feeder polls the
// source for what is due now, sends it (through the request latency, if any), and sleeps until the next
// due time or until a request leaves (on_finished with its records tells the source, wake() re-polls);
// the source decides who sends when, so --concurrency and the warm-up phase do not apply.
// All calls come from actors of one simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "common/input_error.h"
#include "common/rng.h"
#include "engine/core/arrival_source.h"
#include "sim/simgrid/simgrid_adapter.h"

namespace tokenline {

struct RequestLatency {
  double mean_s = 0;  // 0: none
  uint64_t seed = 0;
};

struct ClientLoop {
  int32_t concurrency = 0;  // 0: open loop
  int64_t warmup = 0;       // closed loop: requests of the warm-up phase (0: none)
};

class Feeder {
 public:
  // At the virtual time the request reaches the engine; sent_s <= now. May move spec.
  using Dispatch = std::function<void(RequestSpec&& spec, double sent_s)>;

  // loop.concurrency 0: open loop. Borrows the source, which must outlive the feeder.
  Feeder(ArrivalSource& source, ClientLoop loop, Dispatch dispatch, RequestLatency latency = {})
      : source_(source),
        concurrency_(loop.concurrency),
        warmup_(loop.concurrency > 0 ? loop.warmup : 0),
        dispatch_(std::move(dispatch)),
        latency_mean_s_(latency.mean_s),
        rng_(latency.seed, "request latency") {}

  // The actor body, called once: feeds until the source ends, then done(). An InputError from the source
  // ends feeding and is kept for input_error() (actor bodies must not throw).
  void run();
  // Closed loop: `requests` sent ones have left (completed or rejected) now, and as many clients send their
  // next; open loop: nothing. Wakes no one.
  void on_finished(int64_t requests = 1);
  // The same for these records, which a closed-loop source (sessions) also hears of. Wakes no one.
  void on_finished(std::span<const RequestRecord> records);
  // Wakes the feeder if it waits for a free slot (a spare wake-up only makes it look again).
  void wake();

  bool done() const { return done_; }
  int64_t in_flight() const { return in_flight_; }  // closed loop: sent and not yet left
  const std::optional<InputError>& input_error() const { return input_error_; }

 private:
  // A request on its way to the engine.
  struct OnTheWay {
    double reach_s = 0, sent_s = 0;
    int64_t order = 0;  // ties in reach_s go in send order
    RequestSpec spec;
    bool operator>(const OnTheWay& o) const {
      return reach_s != o.reach_s ? reach_s > o.reach_s : order > o.order;
    }
  };

  void feed_open_loop();
  void feed_closed_loop();
  void feed_open_loop_delayed();
  void feed_closed_loop_delayed();
  void feed_reactive();
  void send(RequestSpec&& spec, double sent_s);  // onto the way
  bool deliver_due();                            // dispatches the first on the way if it is due
  // Closed loop: the warm-up phase is all sent and some of it has not left.
  bool warmup_draining() const { return issued_ == warmup_ && in_flight_ > 0; }

  ArrivalSource& source_;
  int32_t concurrency_;
  int64_t warmup_;
  Dispatch dispatch_;
  double latency_mean_s_;
  Rng rng_;
  std::vector<OnTheWay> on_the_way_;  // a min-heap by (reach_s, order) under std::greater
  int64_t sends_ = 0;
  std::vector<double> free_since_;      // closed loop, delayed: when each slot freed, not yet refilled
  std::unique_ptr<sg::Signal> signal_;  // made by run(), inside the simulation
  bool waiting_ = false;
  bool done_ = false;
  int64_t in_flight_ = 0;
  int64_t issued_ = 0;  // closed loop: requests sent so far
  std::optional<InputError> input_error_;
};

}  // namespace tokenline
