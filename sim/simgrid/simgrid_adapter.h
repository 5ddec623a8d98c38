// The one seam between tokenline and SimGrid (docs/architecture.md "Simulation driver"): this file pair and
// simgrid_network.{h,cpp} (cluster platforms and activities) are the only code that includes
// <simgrid/s4u.hpp>, so an API change in SimGrid (its zone API changed after 3.32) touches nothing else. One
// SimEngine per process (SimGrid's engine is a process singleton whose clock never resets). Actor bodies must
// not throw: SimGrid aborts the process on an escaping exception, so add_actor() wraps every body and stores
// the first exception's message for the caller to report.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace tokenline::sg {

struct PlatformSpec;  // sim/simgrid/simgrid_platform.h

// A wait would take the virtual clock past limits::kMaxSimulatedS (common/input_limits.h).
class HorizonPassed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SimEngine {
 public:
  // Creates the engine with the exact-bandwidth network config (CM02, no cross traffic, no TCP-gamma)
  // unless the same keys were given as --cfg, silences SimGrid's logs and builds a one-host platform.
  SimEngine();
  // The same, on a cluster platform (sim/simgrid/simgrid_network.h): GPU hosts, links and routes, for
  // backends that run activities. Actors run on a driver host of that platform.
  explicit SimEngine(const PlatformSpec& platform);
  ~SimEngine();
  SimEngine(const SimEngine&) = delete;
  SimEngine& operator=(const SimEngine&) = delete;

  // Actors start in creation order at time 0; same-time wake-ups are ordered by creation (actor pid).
  void add_actor(const std::string& name, std::function<void()> body);
  // Runs until every actor has returned. Returns false when an actor threw (see error()) or deadlocked,
  // or when the virtual clock passed the simulated horizon (limits::kMaxSimulatedS; horizon_passed()).
  bool run();
  const std::string& error() const { return error_; }
  // The run stopped at the simulated horizon: its inputs (a profile's timing terms, a workload's
  // arrivals) asked for more virtual time than a run may have. error() says where.
  bool horizon_passed() const { return horizon_passed_; }

 private:
  void configure();  // engine, network config and log threshold; before any zone
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string error_;
  bool horizon_passed_ = false;
};

double now_s();  // the virtual clock; only valid inside an actor or between runs
// Both throw HorizonPassed (caught by the actor's wrapper, which ends the run) instead of waiting past
// the simulated horizon; a non-finite time passes it too.
void sleep_for(double duration_s);
void sleep_until(double time_s);

// Signal: wakes one waiting actor. notify() before wait() is not lost (the next wait returns at once);
// several notifies before a wait collapse into one. Create and use only inside a running simulation.
class Signal {
 public:
  Signal();
  ~Signal();
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  void wait();
  // wait(), but returns at virtual time t_s at the latest.
  void wait_until(double t_s);
  void notify();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenline::sg
