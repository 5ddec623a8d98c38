// The SimGrid seam. SimGrid allows one engine per process, so each test case here makes one engine and
// ctest runs each case in a process of its own (catch_discover_tests); the driver's own runs use the
// tokenline binary.
#include "sim/simgrid/simgrid_adapter.h"

#include <catch2/catch.hpp>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tokenline {
namespace {

TEST_CASE("actors sleep in virtual time while signals are kept and exceptions stay inside",
          "[simgrid_adapter]") {
  sg::SimEngine engine;
  std::vector<double> wakeups;
  sg::Signal* signal = nullptr;
  bool notified_early = false;
  engine.add_actor("sleeper", [&] {
    sg::Signal s;
    signal = &s;
    sg::sleep_for(0.25);
    wakeups.push_back(sg::now_s());
    s.wait();  // notified at 0.1 s, before this wait: must return at once
    wakeups.push_back(sg::now_s());
    s.wait();  // notified again at 0.5 s
    wakeups.push_back(sg::now_s());
  });
  engine.add_actor("notifier", [&] {
    sg::sleep_until(0.1);
    signal->notify();
    notified_early = true;
    sg::sleep_until(0.5);
    signal->notify();
  });
  engine.add_actor("thrower", [] {
    sg::sleep_for(1.0);
    throw std::runtime_error("boom");
  });
  CHECK_FALSE(engine.run());
  CHECK(engine.error() == "thrower: boom");
  CHECK(notified_early);
  CHECK(wakeups == std::vector<double>{0.25, 0.25, 0.5});
  CHECK(sg::now_s() == 1.0);
}

TEST_CASE("a wait past the simulated horizon stops the run with a message instead of reaching SimGrid",
          "[simgrid_adapter]") {
  // A profile term of 1e308 s reached SimGrid as "duration is not finite!" (SIGABRT); 1e20 s ran to 1e22 s.
  sg::SimEngine engine;
  bool after_horizon = false;
  engine.add_actor("instance 0", [&] {
    sg::sleep_for(1.0);
    sg::sleep_for(1e20);
    after_horizon = true;
  });
  engine.add_actor("infinite", [&] {
    sg::sleep_for(2.0);
    sg::sleep_for(std::numeric_limits<double>::infinity());
    after_horizon = true;
  });
  engine.add_actor("late", [&] {
    sg::sleep_until(3.0);
    sg::sleep_until(3e9);
    after_horizon = true;
  });
  CHECK_FALSE(engine.run());
  CHECK(engine.horizon_passed());
  CHECK_FALSE(after_horizon);
  CHECK(engine.error() ==
        "instance 0: the simulated clock would pass its horizon of 2e+09 s (an input limit, README \"Hostile "
        "and careless input\"): a wait of 1e+20 s at 1 s; a step or a profile timing term far too long, or "
        "arrivals too late");
  CHECK(sg::now_s() == 3.0);
}

}  // namespace
}  // namespace tokenline
