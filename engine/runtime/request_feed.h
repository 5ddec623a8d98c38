// RequestFeed: where the engine loop's requests come from - a recorded workload replayed at its arrival
// times (tokenline run: WorkloadFeed), a closed-loop source such as multi-turn sessions played against the
// engine's completions (tokenline run: SourceFeed, the same rule as the simulator's feeder), or clients of
// the HTTP server as they connect (tokenline serve: LiveFeed). The loop asks for what has arrived by a time
// and waits, while idle, for the next arrival; it tells the feed of every request that left (on_left).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "engine/core/arrival_source.h"
#include "engine/core/request.h"
#include "engine/runtime/clock.h"

namespace tokenline {

class RequestFeed {
 public:
  virtual ~RequestFeed() = default;
  // Appends every request that has arrived by t_s (engine clock), in arrival order.
  virtual void take_until(double t_s, std::vector<TimedRequest>& out) = 0;
  // Called when the engine is idle: returns once a request has arrived, with its arrival time (the
  // clock having reached it), or false when no request will ever come.
  virtual bool wait_next(Clock& clock, double* arrival_s) = 0;
  // True when arrivals happen in wall time (live clients): the loop's clock then follows the Clock
  // between steps instead of advancing by measured step durations alone.
  virtual bool wall_time() const { return false; }
  // A request left the engine (finished or rejected) at engine time now_s.
  virtual void on_left(const RequestRecord& /*record*/, double /*now_s*/) {}
};

// A closed-loop ArrivalSource (ArrivalSource::reacts_to_completions(): run/session_arrivals.h) polled at
// the engine's times and told of each request that left. REQUIRES: the source outlives the feed.
class SourceFeed final : public RequestFeed {
 public:
  explicit SourceFeed(ArrivalSource& source) : source_(source) {}
  void take_until(double t_s, std::vector<TimedRequest>& out) override;
  // Idle: the turn already due, or sleeps the clock until the source's next due time. A source blocked on
  // an answer while the engine holds no request cannot go on, so it ends the feed, as its end does.
  bool wait_next(Clock& clock, double* arrival_s) override;
  void on_left(const RequestRecord& record, double now_s) override;

 private:
  ArrivalSource& source_;
  double last_s_ = 0;                 // the latest engine time polled or told
  std::optional<TimedRequest> held_;  // polled due by wait_next, handed out by the next take_until
};

// A workload sorted by arrival time. REQUIRES: the requests outlive the feed.
class WorkloadFeed final : public RequestFeed {
 public:
  explicit WorkloadFeed(std::span<const TimedRequest> requests) : requests_(requests) {}
  void take_until(double t_s, std::vector<TimedRequest>& out) override;
  bool wait_next(Clock& clock, double* arrival_s) override;

 private:
  std::span<const TimedRequest> requests_;
  size_t next_ = 0;
};

// Requests pushed by other threads (the HTTP server's), stamped with the clock at push. Thread-safe.
class LiveFeed final : public RequestFeed {
 public:
  explicit LiveFeed(Clock& clock) : clock_(clock) {}
  // Stamps the request's arrival; false after close().
  bool push(RequestSpec spec);
  // No more requests: wait_next returns false once the queue is empty.
  void close();
  void take_until(double t_s, std::vector<TimedRequest>& out) override;
  bool wait_next(Clock& clock, double* arrival_s) override;
  bool wall_time() const override { return true; }

 private:
  Clock& clock_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TimedRequest> queue_;
  bool closed_ = false;
};

}  // namespace tokenline
