#include "sim/simgrid/simgrid_adapter.h"

#include <xbt/log.h>

#include <exception>
#include <simgrid/s4u.hpp>
#include <vector>
#include <xbt/config.hpp>

#include "common/input_limits.h"
#include "common/number_text.h"
#include "sim/simgrid/simgrid_network_build.h"

namespace tokenline::sg {
namespace s4u = simgrid::s4u;

namespace {

// The analytic backend only sleeps, so one host suffices; its speed is irrelevant (no exec activities).
constexpr double kHostSpeedFlops = 1e9;

void set_unless_given(const char* key, const std::string& value) {
  if (simgrid::config::is_default(key)) s4u::Engine::set_config(std::string(key) + ":" + value);
}

std::string horizon_message(const std::string& what) {
  return "the simulated clock would pass its horizon of " + number_text(limits::kMaxSimulatedS) +
         " s (an input limit, README \"Hostile and careless input\"): " + what +
         "; a step or a profile timing term far too long, or arrivals too late";
}

// Throws HorizonPassed when a wait (`what`) would end at `until_s`, past the horizon or not finite.
void check_horizon(double until_s, const std::string& what) {
  if (until_s <= limits::kMaxSimulatedS) return;
  throw HorizonPassed(horizon_message(what + " at " + number_text(s4u::Engine::get_clock()) + " s"));
}

}  // namespace

struct SimEngine::Impl {
  std::unique_ptr<s4u::Engine> engine;
  s4u::Host* host = nullptr;
  std::vector<std::string> failures;
  bool horizon_passed = false;
};

SimEngine::SimEngine() : impl_(std::make_unique<Impl>()) {
  configure();
  auto* zone = s4u::create_full_zone("world");
  impl_->host = zone->create_host("driver", kHostSpeedFlops);
  zone->seal();
}

SimEngine::SimEngine(const PlatformSpec& platform) : impl_(std::make_unique<Impl>()) {
  configure();
  impl_->host = build_network(platform);
}

void SimEngine::configure() {
  // Silence everything below critical, including the "[xbt_cfg/INFO] Configuration change" lines.
  xbt_log_control_set("root.thres:critical");
  int argc = 1;
  char program[] = "tokenline";
  char* argv[] = {program, nullptr};
  impl_->engine = std::make_unique<s4u::Engine>(&argc, argv);
  set_unless_given("network/model", "CM02");
  set_unless_given("network/crosstraffic", "0");
  set_unless_given("network/TCP-gamma", "0");
}

SimEngine::~SimEngine() = default;

void SimEngine::add_actor(const std::string& name, std::function<void()> body) {
  Impl* impl = impl_.get();
  s4u::Actor::create(name, impl->host, [impl, name, body = std::move(body)]() {
    try {
      body();
    } catch (const HorizonPassed& e) {
      if (!impl->horizon_passed) impl->failures.insert(impl->failures.begin(), name + ": " + e.what());
      impl->horizon_passed = true;
    } catch (const std::exception& e) {
      impl->failures.push_back(name + ": " + e.what());
    } catch (...) {
      impl->failures.push_back(name + ": unknown exception");
    }
  });
}

bool SimEngine::run() {
  impl_->engine->run();
  // Activities (the simgrid backend's transfers and execs) advance the clock without a wait to check.
  if (!impl_->horizon_passed && !(s4u::Engine::get_clock() <= limits::kMaxSimulatedS)) {
    impl_->failures.insert(
        impl_->failures.begin(),
        horizon_message("the run ended at " + number_text(s4u::Engine::get_clock()) + " s"));
    impl_->horizon_passed = true;
  }
  horizon_passed_ = impl_->horizon_passed;
  if (!impl_->failures.empty()) {
    error_ = impl_->failures.front();
    return false;
  }
  if (impl_->engine->get_actor_count() > 0) {
    error_ = "simulation deadlocked: " + std::to_string(impl_->engine->get_actor_count()) + " actors blocked";
    return false;
  }
  return true;
}

double now_s() {
  return s4u::Engine::get_clock();
}
void sleep_for(double duration_s) {
  check_horizon(s4u::Engine::get_clock() + duration_s, "a wait of " + number_text(duration_s) + " s");
  s4u::this_actor::sleep_for(duration_s);
}
void sleep_until(double time_s) {
  check_horizon(time_s, "a wait until " + number_text(time_s) + " s");
  s4u::this_actor::sleep_until(time_s);
}

struct Signal::Impl {
  s4u::SemaphorePtr semaphore = s4u::Semaphore::create(0);
  bool waiting = false;
  bool pending = false;
};

Signal::Signal() : impl_(std::make_unique<Impl>()) {}
Signal::~Signal() = default;

void Signal::wait() {
  if (impl_->pending) {
    impl_->pending = false;
    return;
  }
  impl_->waiting = true;
  impl_->semaphore->acquire();
}

void Signal::wait_until(double t_s) {
  if (impl_->pending) {
    impl_->pending = false;
    return;
  }
  impl_->waiting = true;
  if (impl_->semaphore->acquire_timeout(std::max(0.0, t_s - s4u::Engine::get_clock())))
    impl_->waiting = false;
}

void Signal::notify() {
  if (impl_->waiting) {
    impl_->waiting = false;
    impl_->semaphore->release();
  } else {
    impl_->pending = true;
  }
}

}  // namespace tokenline::sg
