// The drivers' arrival feeder, open and closed loop, in one simulation (SimGrid allows one engine per
// process; ctest runs this case in a process of its own). Times are relative to the clock when the engine
// was made, so the case also holds after an earlier simulation in the same process. Nothing throws inside
// actors: what they see is stored and checked after run().
#include "sim/feeder.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "sim/simgrid_adapter.h"

namespace tokenline {
namespace {

constexpr double kTimeEps = 1e-9;  // sleep_until rounding at small clocks is far below a nanosecond

// Requests with ids 0..n-1 at the given times; throws InputError instead of returning request `throw_at`.
class ListSource : public ArrivalSource {
 public:
  explicit ListSource(std::vector<double> times_s, size_t throw_at = SIZE_MAX)
      : times_s_(std::move(times_s)), throw_at_(throw_at) {}
  bool next(Arrival& out) override {
    if (next_ == throw_at_) throw InputError("list:" + std::to_string(next_), "a request", "garbage");
    if (next_ == times_s_.size()) return false;
    out.trace_time_s = times_s_[next_];
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

TEST_CASE("the feeder releases requests at their times (open loop) or as earlier ones leave (closed loop)",
          "[feeder]") {
  sg::SimEngine engine;
  const double t0 = sg::now_s();
  const auto rel = [t0] { return sg::now_s() - t0; };

  // Open loop: the trace times, whatever leaves; on_finished() counts nothing.
  ListSource open_source({t0 + 0.5, t0 + 0.5, t0 + 2.0});
  std::vector<Sent> open_sent;
  Feeder open(open_source, 0, [&](RequestSpec&& s) { open_sent.push_back({s.id, rel(), open.in_flight()}); });
  open.on_finished(5);
  double open_done_s = -1;
  engine.add_actor("open", [&] {
    open.run();
    open_done_s = rel();
  });

  // Closed loop, 2 in flight: a server ends the oldest request each second; the first end is announced
  // with on_finished() at 1 s but wake() only at 1.25 s, so the third request goes at 1.25 s.
  ListSource closed_source({t0 + 9.0, t0 + 9.0, t0 + 9.0, t0 + 9.0, t0 + 9.0});  // times unused
  std::vector<Sent> closed_sent;
  std::deque<RequestId> serving;
  Feeder closed(closed_source, 2, [&](RequestSpec&& s) {
    closed_sent.push_back({s.id, rel(), closed.in_flight()});
    serving.push_back(s.id);
  });
  double closed_done_s = -1;
  engine.add_actor("closed", [&] {
    closed.run();
    closed_done_s = rel();
  });
  std::vector<RequestId> ended;
  engine.add_actor("server", [&] {
    for (int k = 1; k <= 4; ++k) {
      sg::sleep_until(t0 + k);
      ended.push_back(serving.front());
      serving.pop_front();
      closed.on_finished();
      if (k == 1) sg::sleep_for(0.25);
      closed.wake();
    }
  });

  // Closed loop, 1 in flight, every request rejected inside dispatch: all go at once, no wait.
  ListSource rejected_source({t0 + 3.0, t0 + 3.0, t0 + 3.0});
  std::vector<Sent> rejected_sent;
  Feeder rejecting(rejected_source, 1, [&](RequestSpec&& s) {
    rejected_sent.push_back({s.id, rel(), rejecting.in_flight()});
    rejecting.on_finished();
  });
  engine.add_actor("rejecting", [&] { rejecting.run(); });

  // A malformed second line ends feeding; the error is kept, not thrown out of the actor.
  ListSource bad_source({t0 + 0.1, t0 + 0.2}, 1);
  std::vector<Sent> bad_sent;
  Feeder bad(bad_source, 0, [&](RequestSpec&& s) { bad_sent.push_back({s.id, rel(), 0}); });
  engine.add_actor("bad", [&] { bad.run(); });

  REQUIRE(engine.run());

  REQUIRE(open_sent.size() == 3);
  CHECK(open_sent[0].at_s == Approx(0.5).margin(kTimeEps));
  CHECK(open_sent[1].at_s == Approx(0.5).margin(kTimeEps));
  CHECK(open_sent[2].at_s == Approx(2.0).margin(kTimeEps));
  CHECK(open_sent[2].in_flight == 0);
  CHECK(open_done_s == Approx(2.0).margin(kTimeEps));
  CHECK(open.done());
  CHECK_FALSE(open.input_error());

  // Timeline (2 slots): 0 s send 0,1 | 1 s 0 ends (woken 1.25 s: send 2) | 2 s 1 ends: send 3 |
  // 3 s 2 ends: send 4 | 4 s 3 ends: the source is empty, done.
  REQUIRE(closed_sent.size() == 5);
  const std::vector<double> expected_s = {0.0, 0.0, 1.25, 2.0, 3.0};
  for (size_t i = 0; i < closed_sent.size(); ++i) {
    CHECK(closed_sent[i].id == static_cast<RequestId>(i));
    CHECK(closed_sent[i].at_s == Approx(expected_s[i]).margin(kTimeEps));
    CHECK(closed_sent[i].in_flight <= 2);  // counted before dispatch, so the sent one is included
  }
  CHECK(closed_sent[1].in_flight == 2);
  CHECK(ended == std::vector<RequestId>{0, 1, 2, 3});
  CHECK(closed_done_s == Approx(4.0).margin(kTimeEps));
  CHECK(closed.in_flight() == 1);  // request 4 never ended

  REQUIRE(rejected_sent.size() == 3);
  for (const Sent& s : rejected_sent) {
    CHECK(s.at_s == Approx(0.0).margin(kTimeEps));
    CHECK(s.in_flight == 1);
  }
  CHECK(rejecting.done());
  CHECK(rejecting.in_flight() == 0);

  REQUIRE(bad_sent.size() == 1);
  CHECK(bad_sent[0].at_s == Approx(0.1).margin(kTimeEps));
  CHECK(bad.done());
  REQUIRE(bad.input_error());
  CHECK(std::string(bad.input_error()->what()) == "list:1: expected a request, found garbage");
}

}  // namespace
}  // namespace tokenline
