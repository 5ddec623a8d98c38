// RequestFeed: where the engine loop's requests come from - a recorded workload replayed at its arrival
// times (tokenline run: WorkloadFeed) or clients of the HTTP server as they connect (tokenline serve:
// LiveFeed). The loop asks for what has arrived by a time and waits, while idle, for the next arrival.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
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
