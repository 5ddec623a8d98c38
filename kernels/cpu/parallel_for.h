// parallel_for: splits [0, n) into contiguous chunks over the calling thread's workers (worker_pool.h).
// Each index must write only its own outputs, so results do not depend on the thread count (deterministic).
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>

#include "kernels/cpu/worker_pool.h"

namespace tokenline::cpu {

constexpr int64_t kMaxWorkers = 64;  // upper bound on threads per call; the machine decides below that

// The most workers a parallel_for on the calling thread may use (0: the machine's cores). The model
// runner's rank threads each take their share of the cores (ScopedWorkerCap), as OpenMP caps nested
// regions: ranks x workers would otherwise oversubscribe the machine. The one thread-local knob here;
// results never depend on it (each index writes only its own outputs).
inline thread_local int64_t t_worker_cap = 0;

class ScopedWorkerCap {
 public:
  explicit ScopedWorkerCap(int64_t cap) : saved_(t_worker_cap) { t_worker_cap = cap; }
  ~ScopedWorkerCap() { t_worker_cap = saved_; }
  ScopedWorkerCap(const ScopedWorkerCap&) = delete;
  ScopedWorkerCap& operator=(const ScopedWorkerCap&) = delete;

 private:
  int64_t saved_;
};

// Calls fn(i) for every i in [0, n); min_per_worker keeps small loops on one thread.
template <class Fn>
void parallel_for(int64_t n, int64_t min_per_worker, Fn fn) {
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t hw = t_worker_cap > 0 ? std::min(cores, t_worker_cap) : cores;
  const int64_t workers =
      std::min({hw, kMaxWorkers, std::max<int64_t>(1, n / std::max<int64_t>(1, min_per_worker))});
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  auto run_chunk = [&](int64_t w) {
    const int64_t begin = n * w / workers, end = n * (w + 1) / workers;
    for (int64_t i = begin; i < end; ++i) fn(i);
  };
  run_on_workers(
      workers, [](void* chunk, int64_t w) { (*static_cast<decltype(run_chunk)*>(chunk))(w); }, &run_chunk);
}

}  // namespace tokenline::cpu
