// The SimGrid seam. SimGrid allows one engine per process, so this file holds one test case, which ctest
// runs in a process of its own (catch_discover_tests); the driver's own runs use the tokenline binary.
#include "sim/simgrid/simgrid_adapter.h"

#include <catch2/catch.hpp>
#include <stdexcept>
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

}  // namespace
}  // namespace tokenline
