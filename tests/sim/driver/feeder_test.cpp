// The drivers' arrival feeder, open and closed loop. One SimEngine per test case (ctest runs each case in
// a process of its own); times are relative to the clock when the engine was made, so the cases also hold
// one after another in one process. Nothing throws inside actors: what they see is stored and checked
// after run().
#include "sim/driver/feeder.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/simgrid/simgrid_adapter.h"
#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

constexpr double kTimeEps = 1e-9;  // sleep_until rounding at small clocks is far below a nanosecond

// Requests with ids 0..n-1 at the given times; throws InputError instead of returning request `throw_at`.
class ListSource : public ArrivalSource {
 public:
  explicit ListSource(std::vector<double> times_s, size_t throw_at = SIZE_MAX)
      : times_s_(std::move(times_s)), throw_at_(throw_at) {}
  bool next(TimedRequest& out) override {
    if (next_ == throw_at_) throw InputError("list:" + std::to_string(next_), "a request", "garbage");
    if (next_ == times_s_.size()) return false;
    out.arrival_s = times_s_[next_];
    out.spec = RequestSpec{};
    out.spec.id = static_cast<RequestId>(next_);
    ++next_;
    return true;
  }

 private:
  std::vector<double> times_s_;
  size_t throw_at_;
  size_t next_ = 0;
};

struct Sent {
  RequestId id = 0;
  double at_s = 0;  // relative to the engine's start
  int64_t in_flight = 0;
};

// One engine whose clock starts at t0 (non-zero after an earlier engine in the same process).
struct Sim {
  sg::SimEngine engine;
  double t0 = sg::now_s();
  double rel() const { return sg::now_s() - t0; }
};

TEST_CASE("open loop: each request at its trace time, whatever leaves", "[feeder]") {
  Sim sim;
  ListSource source({sim.t0 + 0.5, sim.t0 + 0.5, sim.t0 + 2.0});
  std::vector<Sent> sent;
  Feeder feeder(source, ClientLoop{.concurrency = 0, .warmup = 0}, [&](RequestSpec&& s, double) {
    sent.push_back({s.id, sim.rel(), feeder.in_flight()});
  });
  double done_s = -1;
  sim.engine.add_actor("feeder", [&] {
    feeder.on_finished(5);  // counts nothing in open loop
    feeder.run();
    done_s = sim.rel();
  });
  REQUIRE(sim.engine.run());

  const std::vector<double> expected_s = {0.5, 0.5, 2.0};
  REQUIRE(sent.size() == expected_s.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    CHECK(sent[i].id == static_cast<RequestId>(i));
    CHECK(sent[i].at_s == Approx(expected_s[i]).margin(kTimeEps));
    CHECK(sent[i].in_flight == 0);
  }
  CHECK(done_s == Approx(2.0).margin(kTimeEps));
  CHECK(feeder.done());
  CHECK_FALSE(feeder.input_error());
}

TEST_CASE("closed loop: N in flight, the next sent when the feeder is woken after one leaves", "[feeder]") {
  Sim sim;
  ListSource source(std::vector<double>(5, sim.t0 + 9.0));  // trace times are ignored in closed loop
  std::vector<Sent> sent;
  std::deque<RequestId> serving;
  Feeder feeder(source, ClientLoop{.concurrency = 2, .warmup = 0}, [&](RequestSpec&& s, double) {
    sent.push_back({s.id, sim.rel(), feeder.in_flight()});
    serving.push_back(s.id);
  });
  double done_s = -1;
  sim.engine.add_actor("feeder", [&] {
    feeder.run();
    done_s = sim.rel();
  });
  // A server ends the oldest request each second; the first end is told with on_finished() at 1 s but
  // wake() only at 1.25 s.
  std::vector<RequestId> ended;
  sim.engine.add_actor("server", [&] {
    for (int k = 1; k <= 4; ++k) {
      sg::sleep_until(sim.t0 + k);
      ended.push_back(serving.front());
      serving.pop_front();
      feeder.on_finished();
      if (k == 1) sg::sleep_for(0.25);
      feeder.wake();
    }
  });
  REQUIRE(sim.engine.run());

  // 0 s: send 0, 1 | 1 s: 0 ends, woken 1.25 s: send 2 | 2 s: 1 ends, send 3 | 3 s: 2 ends, send 4 |
  // 4 s: 3 ends, the source is empty: done.
  const std::vector<double> expected_s = {0.0, 0.0, 1.25, 2.0, 3.0};
  REQUIRE(sent.size() == expected_s.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    CHECK(sent[i].id == static_cast<RequestId>(i));
    CHECK(sent[i].at_s == Approx(expected_s[i]).margin(kTimeEps));
    CHECK(sent[i].in_flight == (i == 0 ? 1 : 2));  // counted before dispatch, the sent one included
  }
  CHECK(ended == std::vector<RequestId>{0, 1, 2, 3});
  CHECK(done_s == Approx(4.0).margin(kTimeEps));
  CHECK(feeder.in_flight() == 1);  // request 4 never ended
}

TEST_CASE("closed loop: requests rejected inside dispatch free their slot at once", "[feeder]") {
  Sim sim;
  ListSource source({sim.t0 + 3.0, sim.t0 + 3.0, sim.t0 + 3.0});
  std::vector<Sent> sent;
  Feeder feeder(source, ClientLoop{.concurrency = 1, .warmup = 0}, [&](RequestSpec&& s, double) {
    sent.push_back({s.id, sim.rel(), feeder.in_flight()});
    feeder.on_finished();
  });
  sim.engine.add_actor("feeder", [&] { feeder.run(); });
  REQUIRE(sim.engine.run());

  REQUIRE(sent.size() == 3);
  for (const Sent& s : sent) {
    CHECK(s.at_s == Approx(0.0).margin(kTimeEps));
    CHECK(s.in_flight == 1);
  }
  CHECK(feeder.done());
  CHECK(feeder.in_flight() == 0);
}

TEST_CASE("request latency: open loop, each request reaches the engine after its own delay, sent time kept",
          "[feeder]") {
  Sim sim;
  ListSource source({sim.t0 + 0.5, sim.t0 + 0.5, sim.t0 + 2.0, sim.t0 + 2.0});
  struct Reached {
    RequestId id;
    double sent_s, at_s;
  };
  std::vector<Reached> reached;
  constexpr double kMeanS = 0.2;
  Feeder feeder(
      source, ClientLoop{.concurrency = 0, .warmup = 0},
      [&](RequestSpec&& s, double sent_s) {
        reached.push_back({s.id, sent_s - sim.t0, sim.rel()});
      },
      RequestLatency{.mean_s = kMeanS, .seed = 7});
  sim.engine.add_actor("feeder", [&] { feeder.run(); });
  REQUIRE(sim.engine.run());

  REQUIRE(reached.size() == 4);
  double delay_sum = 0;
  bool spread = false;
  for (size_t i = 0; i < reached.size(); ++i) {
    const Reached& r = reached[i];
    CHECK(r.sent_s == Approx(r.id < 2 ? 0.5 : 2.0).margin(kTimeEps));  // the trace time, not the reach
    CHECK(r.at_s > r.sent_s);
    if (i > 0) CHECK(r.at_s >= reached[i - 1].at_s);  // in order of reaching the engine
    delay_sum += r.at_s - r.sent_s;
    spread = spread || std::abs((r.at_s - r.sent_s) - (reached[0].at_s - reached[0].sent_s)) > 1e-6;
  }
  CHECK(spread);  // each its own draw
  CHECK(delay_sum / 4 < 10 * kMeanS);
}

// A closed loop over `requests` requests served by a server that ends the oldest request it holds each
// second from 1 s to `seconds` s. Returns each request's (sent, reached) times relative to t0, in the order
// they reached the server.
std::vector<std::pair<double, double>> closed_loop_run(size_t requests, ClientLoop loop,
                                                       RequestLatency latency, int seconds) {
  Sim sim;
  ListSource source(std::vector<double>(requests, sim.t0));
  std::vector<std::pair<double, double>> sent_reached;
  std::deque<RequestId> serving;
  Feeder* f = nullptr;
  Feeder feeder(
      source, loop,
      [&](RequestSpec&& s, double sent_s) {
        sent_reached.emplace_back(sent_s - sim.t0, sim.rel());
        serving.push_back(s.id);
      },
      latency);
  f = &feeder;
  sim.engine.add_actor("feeder", [&] { f->run(); });
  sim.engine.add_actor("server", [&] {
    for (int k = 1; k <= seconds; ++k) {
      sg::sleep_until(sim.t0 + k);
      if (serving.empty()) continue;
      serving.pop_front();
      f->on_finished();
      f->wake();
    }
  });
  REQUIRE(sim.engine.run());
  return sent_reached;
}

TEST_CASE("request latency: closed loop, the next request is sent when one leaves and arrives later",
          "[feeder]") {
  // 5 requests, 2 clients: the 4th end finds the source empty.
  auto run = [](uint64_t seed) {
    return closed_loop_run(5, ClientLoop{.concurrency = 2, .warmup = 0},
                           RequestLatency{.mean_s = 0.1, .seed = seed}, 4);
  };
  const auto a = run(3), b = run(3), c = run(4);
  REQUIRE(a.size() == 5);  // 2 at the start, one after each of the first 3 ends
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].second > a[i].first);                                            // reached after it was sent
    CHECK(a[i].first == Approx(i < 2 ? 0.0 : double(i - 1)).margin(kTimeEps));  // sent when a slot freed
  }
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].second == Approx(b[i].second).margin(kTimeEps));  // the same seed, the same delays
    differs = differs || std::abs(a[i].second - c[i].second) > 1e-6;
  }
  CHECK(differs);  // another seed, other delays
}

TEST_CASE("closed loop with a warm-up phase: the rest wait until all of it has left, then go together",
          "[feeder]") {
  // 0 s: send 0, 1 | 1 s: 0 ends, send 2 (the last of the warm-up) | 2 s: 1 ends, 2 is still in flight:
  // nothing sent | 3 s: 2 ends, the warm-up has left: both clients send (3, 4) | 4 s: 3 ends, send 5.
  const std::vector<double> expected_s = {0.0, 0.0, 1.0, 3.0, 3.0, 4.0};
  for (const double latency_s : {0.0, 0.1}) {
    CAPTURE(latency_s);
    // 2 clients over 6 requests whose first 3 are the warm-up, with and without a delay on the way.
    const auto sent_reached = closed_loop_run(6, ClientLoop{.concurrency = 2, .warmup = 3},
                                              RequestLatency{.mean_s = latency_s, .seed = 5}, 6);
    REQUIRE(sent_reached.size() == expected_s.size());
    for (size_t i = 0; i < sent_reached.size(); ++i)
      CHECK(sent_reached[i].first == Approx(expected_s[i]).margin(kTimeEps));
  }
}

TEST_CASE("a malformed line ends feeding and is kept, not thrown out of the actor", "[feeder]") {
  Sim sim;
  ListSource source({sim.t0 + 0.1, sim.t0 + 0.2}, 1);
  std::vector<Sent> sent;
  Feeder feeder(source, ClientLoop{.concurrency = 0, .warmup = 0}, [&](RequestSpec&& s, double) {
    sent.push_back({s.id, sim.rel(), 0});
  });
  sim.engine.add_actor("feeder", [&] { feeder.run(); });
  REQUIRE(sim.engine.run());

  REQUIRE(sent.size() == 1);
  CHECK(sent[0].at_s == Approx(0.1).margin(kTimeEps));
  CHECK(feeder.done());
  REQUIRE(feeder.input_error());
  CHECK(std::string(feeder.input_error()->what()) == "list:1: expected a request, found garbage");
}

// Regression: the PD driver freed a prefill-rejected request's slot without waking the feeder, so with
// nothing else in flight the run deadlocked ("simulation failed: feeder: ..."). Both drivers, as processes.
TEST_CASE("closed loop: a request the instance rejects lets the next one in (PD deadlocked)", "[feeder]") {
  testing::TestDir dir("feeder_reject");
  const std::string workload = dir.file("w.jsonl");
  {
    std::ofstream out(workload);
    out << "{\"arrival_s\": 0, \"input_tokens\": 2000, \"output_tokens\": 1}\n"  // > 10 pages: rejected
        << "{\"arrival_s\": 0, \"input_tokens\": 640, \"output_tokens\": 1}\n";  // 10 pages: fits
  }
  constexpr size_t kColStatus = 9;  // requests.csv
  for (const std::string pd : {"", "--pd 1P1D "}) {
    INFO(pd);
    const std::string out = dir.file(pd.empty() ? "colocated" : "pd");
    const auto r =
        testing::run_tokenline("sim --workload '" + workload + "' --out '" + out + "' " + pd +
                                   "--parallel tp8 --kv-pages 10 --no-prefix-cache --concurrency 1",
                               dir);
    REQUIRE(r.exit_code == 0);
    const auto rows = testing::read_csv_rows(out + "/requests.csv");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0][kColStatus] == "never_fits_kv");
    CHECK(rows[1][kColStatus] == "completed");
  }
}

// A closed-loop source of one two-turn session: turn 1 is due 1 s after turn 0 leaves.
class TurnSource : public ArrivalSource {
 public:
  explicit TurnSource(double t0) : t0_(t0) {}
  bool next(TimedRequest&) override { return false; }
  bool reacts_to_completions() const override { return true; }
  Poll poll(double now_s, TimedRequest& out) override {
    if (sent_ == 0 || (sent_ == 1 && due_s_ >= 0 && due_s_ <= now_s)) {
      out.arrival_s = sent_ == 0 ? t0_ : due_s_;
      out.spec = RequestSpec{};
      out.spec.id = sent_++;
      return {.due = Due::kNow};
    }
    if (sent_ == 1 && due_s_ >= 0) return {.due = Due::kAt, .at_s = due_s_};
    return {.due = left_ == 2 ? Due::kEnd : Due::kBlocked};
  }
  void on_left(const RequestRecord& r, double now_s) override {
    ++left_;
    if (r.id == 0) due_s_ = now_s + 1.0;
  }

 private:
  double t0_;
  int64_t sent_ = 0, left_ = 0;
  double due_s_ = -1;
};

TEST_CASE("sessions: the next turn goes when the source says, after the answer it waited for", "[feeder]") {
  Sim sim;
  TurnSource source(sim.t0);
  std::vector<Sent> sent;
  // --concurrency does not apply to a closed-loop source: the source paces itself.
  Feeder feeder(source, ClientLoop{.concurrency = 5, .warmup = 0}, [&](RequestSpec&& s, double) {
    sent.push_back({s.id, sim.rel(), 0});
  });
  double done_s = -1;
  sim.engine.add_actor("feeder", [&] {
    feeder.run();
    done_s = sim.rel();
  });
  // A server answers each request 2 s after it came: turn 0 at 0 s leaves at 2 s, turn 1 is due at 3 s
  // and leaves at 5 s; then the source has ended.
  sim.engine.add_actor("server", [&] {
    for (RequestId id = 0; id < 2; ++id) {
      sg::sleep_until(sim.t0 + (id == 0 ? 2.0 : 5.0));
      RequestRecord r;
      r.id = id;
      r.status = RequestStatus::kFinished;
      feeder.on_finished(std::span<const RequestRecord>(&r, 1));
      feeder.wake();
    }
  });
  REQUIRE(sim.engine.run());
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].at_s == Approx(0.0).margin(kTimeEps));
  CHECK(sent[1].at_s == Approx(3.0).margin(kTimeEps));
  CHECK(done_s == Approx(5.0).margin(kTimeEps));
  CHECK(feeder.done());
}

}  // namespace
}  // namespace tokenline
