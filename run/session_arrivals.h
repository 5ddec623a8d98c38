// SessionArrivals: multi-turn sessions played against the engine's completions - the closed-loop
// ArrivalSource (engine/core/arrival_source.h) the simulator's feeder and a real-engine feed poll alike.
// Rule: a session starts at its start_s once a client is free (at most `clients` sessions live at once,
// a client held from a session's first turn to its last answer, think times included; 0 = no cap); turn
// k+1 is sent think_s after turn k's answer left the engine; a turn rejected or cancelled ends its
// session (its client gives up and takes the next session). Turn k's prompt is the session's history - the
// shared prefix, every earlier turn's new tokens and answer - plus its new tokens, hashed in
// kSessionBlockTokens blocks: a full block j of the history carries the same hash in every later turn
// (block_hash(kSession, session, j)), a shared prefix's full blocks the group's, a trailing partial block
// one of its own - so prefix reuse comes from the history alone. Request ids are 0, 1, 2, ... in send
// order. Deterministic: ties in due time go to the session that became due first, then the lower index.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

#include "engine/core/arrival_source.h"
#include "workloads/session_source.h"

namespace tokenline {

struct SessionCounters {
  int64_t started = 0;
  int64_t completed = 0;  // every turn answered
  int64_t abandoned = 0;  // ended by a rejected or cancelled turn
  int64_t turns_sent = 0;
};

class SessionArrivals final : public ArrivalSource {
 public:
  // clients: sessions live at once (0: no cap). REQUIRES clients >= 0.
  SessionArrivals(std::unique_ptr<SessionSource> source, int32_t clients);

  // Every turn of every session in script order, each sent as if every answer came at once (arrival =
  // start_s + the think times before it): for passes that judge the requests, not for timing.
  bool next(TimedRequest& out) override;
  bool reacts_to_completions() const override { return true; }
  Poll poll(double now_s, TimedRequest& out) override;
  void on_left(const RequestRecord& record, double now_s) override;

  const SessionCounters& counters() const { return counters_; }

 private:
  struct Live {
    SessionScript script;
    size_t next_turn = 0;        // the turn to send next (or in flight)
    int64_t history_tokens = 0;  // prefix + every answered turn's new and output tokens
  };
  struct DueTurn {
    double due_s = 0;
    int64_t order = 0;  // when it became due (ties), then
    int64_t session = 0;
    bool operator>(const DueTurn& o) const {
      if (due_s != o.due_s) return due_s > o.due_s;
      return order != o.order ? order > o.order : session > o.session;
    }
  };

  void admit(double now_s);  // starts sessions while clients are free
  void make_request(Live& live, double sent_s, TimedRequest& out);
  void end_session(int64_t session, bool completed);

  std::unique_ptr<SessionSource> source_;
  int32_t clients_;
  std::optional<SessionScript> upcoming_;  // read ahead: the next session to start
  bool source_done_ = false;
  std::map<int64_t, Live> live_;            // by session index
  std::map<RequestId, int64_t> in_flight_;  // request -> session
  std::priority_queue<DueTurn, std::vector<DueTurn>, std::greater<>> due_;
  int64_t dues_ = 0;
  RequestId next_id_ = 0;
  SessionCounters counters_;
  // next(): the session being listed and its clock.
  std::optional<Live> listing_;
  double listing_s_ = 0;
};

}  // namespace tokenline
