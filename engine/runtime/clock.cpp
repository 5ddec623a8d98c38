#include "engine/runtime/clock.h"

#include <chrono>
#include <thread>

namespace tokenline {
namespace {

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SteadyClock::SteadyClock() : origin_ns_(steady_ns()) {}

void SteadyClock::restart() {
  origin_ns_ = steady_ns();
}

double SteadyClock::now_s() {
  return ns_to_s(steady_ns() - origin_ns_);
}

void SteadyClock::sleep_until_s(double t_s) {
  const double wait_s = t_s - now_s();
  if (wait_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
}

}  // namespace tokenline
