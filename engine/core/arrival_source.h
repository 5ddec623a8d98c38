// ArrivalSource: a stream of requests with their trace times, read one at a time (never loaded whole).
// The driver's feeder pulls from it; workload readers are wrapped into it (workload_source.h).
// A closed-loop source (reacts_to_completions(): multi-turn sessions, run/session_arrivals.h) also hears
// when each of its requests left the engine (on_left), because a session's next turn is sent only after
// the previous answer; its feeder polls it (poll) instead of reading it ahead, and the same rule serves the
// simulator's feeder and any real-engine feed.
#pragma once

#include <cstdint>

#include "engine/core/request.h"

namespace tokenline {

// The one timed-request type: a core request with its arrival time, what an ArrivalSource yields, the
// simulation's feeder sends and the real engine's RequestFeed hands its loop (the workload readers'
// WorkloadRequest is the file's record, before it becomes a RequestSpec).
struct TimedRequest {
  double arrival_s = 0;  // in the workload after its window (--start, --time-scale), or when a client sent it
  RequestSpec spec;
};

class ArrivalSource {
 public:
  virtual ~ArrivalSource() = default;
  // Fills `out` with the next request and returns true, or returns false at the end. May throw
  // InputError for a malformed line (only before the simulation starts: see prevalidate in the CLI).
  virtual bool next(TimedRequest& out) = 0;
  // Malformed lines skipped so far (--skip-bad-lines).
  virtual int64_t skipped_lines() const { return 0; }

  // Closed-loop sources: true when a request may wait on an earlier one's answer (then use poll/on_left;
  // next() still yields every request in script order, with arrivals as if each answer came at once, for
  // passes that only judge the requests).
  virtual bool reacts_to_completions() const { return false; }
  enum class Due {
    kNow,      // `out` holds a request to send now; its arrival_s is when its client sent it (<= now_s)
    kAt,       // nothing before `at_s`, when the next one is due (unless a request leaves before then)
    kBlocked,  // nothing until a request leaves
    kEnd,      // nothing more, ever
  };
  struct Poll {
    Due due = Due::kEnd;
    double at_s = 0;  // kAt
  };
  // REQUIRES: reacts_to_completions(). The next request due at or before now_s, or what it waits for.
  virtual Poll poll(double /*now_s*/, TimedRequest& /*out*/) { return {}; }
  // A request this source produced left the engine (finished, handed off for good, or rejected) at now_s.
  virtual void on_left(const RequestRecord& /*record*/, double /*now_s*/) {}
};

}  // namespace tokenline
