// parallel_for over the calling thread's persistent workers: every index runs once, in the chunk the
// worker count gives it, across repeated calls of growing and shrinking width and from several calling
// threads at once (each with its own workers).
#include "kernels/cpu/worker_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {
namespace {

// Runs run_on_workers with `workers` chunks and returns which worker ran each chunk's slot (its index).
std::vector<int64_t> ran_by(int64_t workers) {
  struct Ctx {
    std::vector<int64_t> slots;
  } ctx{std::vector<int64_t>(static_cast<size_t>(workers), -1)};
  run_on_workers(
      workers, [](void* c, int64_t w) { static_cast<Ctx*>(c)->slots[static_cast<size_t>(w)] = w; }, &ctx);
  return ctx.slots;
}

}  // namespace

TEST_CASE("run_on_workers runs every chunk once per call, as the call's width changes") {
  for (int64_t workers : {4, 2, 7, 1, 3, 7, 2}) {
    const std::vector<int64_t> slots = ran_by(workers);
    for (int64_t w = 0; w < workers; ++w) CHECK(slots[static_cast<size_t>(w)] == w);
  }
  for (int repeat = 0; repeat < 200; ++repeat) CHECK(ran_by(3).back() == 2);  // reused, never lost
}

TEST_CASE("parallel_for from several threads at once: each index once, results as the serial loop") {
  constexpr int kCallers = 4;
  constexpr int64_t kN = 10000;
  std::vector<std::vector<int64_t>> out(kCallers, std::vector<int64_t>(kN, 0));
  std::atomic<int64_t> calls{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      ScopedWorkerCap cap(3);
      for (int round = 0; round < 50; ++round) {
        parallel_for(kN, 1, [&](int64_t i) { out[size_t(c)][size_t(i)] += i * (c + 1); });
        calls.fetch_add(1);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  CHECK(calls.load() == kCallers * 50);
  for (int c = 0; c < kCallers; ++c) {
    for (int64_t i = 0; i < kN; i += 997) CHECK(out[size_t(c)][size_t(i)] == 50 * i * (c + 1));
  }
}

}  // namespace tokenline::cpu
