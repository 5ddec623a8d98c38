// RankThreads: every active rank runs once per call, on the same thread call after call, bound to its
// own CPUs; idle ranks do not run; an exception in a rank reaches the caller after every rank finished.
#include "engine/runtime/rank_threads.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <thread>

#include "engine/runtime/rank_cpus.h"

namespace tokenline {

TEST_CASE("each active rank runs once per call, always on its own thread", "[rank_threads]") {
  constexpr int32_t kRanks = 4;
  RankThreads threads(kRanks, allowed_cpus(), 1);
  CHECK(threads.size() == kRanks);
  std::vector<std::thread::id> first(kRanks), seen(kRanks);
  std::vector<int> runs(kRanks, 0);
  threads.run(std::vector<bool>(kRanks, true),
              [&](int32_t g) { first[size_t(g)] = std::this_thread::get_id(); });
  for (int call = 0; call < 200; ++call) {
    const std::vector<bool> active = {true, call % 2 == 0, true, call % 3 == 0};
    threads.run(active, [&](int32_t g) {
      seen[size_t(g)] = std::this_thread::get_id();
      ++runs[size_t(g)];
    });
    for (int32_t g = 0; g < kRanks; ++g) {
      if (active[size_t(g)]) CHECK(seen[size_t(g)] == first[size_t(g)]);
    }
  }
  CHECK(runs == std::vector<int>{200, 100, 200, 67});
  for (int32_t g = 0; g < kRanks; ++g) CHECK(first[size_t(g)] != std::this_thread::get_id());
  threads.run(std::vector<bool>(kRanks, false), [&](int32_t) { FAIL("an idle rank ran"); });
}

TEST_CASE("a rank thread is bound to its rank's CPUs", "[rank_threads]") {
  const std::vector<int> allowed = allowed_cpus();
  REQUIRE(!allowed.empty());
  RankThreads threads(3, allowed, 1);
  std::vector<std::vector<int>> masks(3);  // read on each rank's thread: allowed_cpus() is the caller's mask
  threads.run({true, true, true}, [&](int32_t g) { masks[size_t(g)] = allowed_cpus(); });
  for (int32_t g = 0; g < 3; ++g) CHECK(masks[size_t(g)] == rank_cpus(allowed, g, 1));
  CHECK(allowed_cpus() == allowed);  // the caller's own mask is untouched
  // Given one CPU, every rank shares it: the set passed in, not the process's, decides.
  RankThreads one(2, {allowed.front()}, 1);
  std::vector<std::vector<int>> one_masks(2);
  one.run({true, true}, [&](int32_t g) { one_masks[size_t(g)] = allowed_cpus(); });
  for (const std::vector<int>& m : one_masks) CHECK(m == std::vector<int>{allowed.front()});
}

TEST_CASE("a rank's exception reaches the caller after every rank finished", "[rank_threads]") {
  RankThreads threads(3, allowed_cpus(), 1);
  std::atomic<int> finished{0};
  CHECK_THROWS_WITH(threads.run({true, true, true},
                                [&](int32_t g) {
                                  if (g == 1) throw std::runtime_error("rank 1 failed");
                                  std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                  ++finished;
                                }),
                    "rank 1 failed");
  CHECK(finished == 2);
  // The threads are still there for the next call.
  int runs = 0;
  threads.run({false, true, false}, [&](int32_t) { ++runs; });
  CHECK(runs == 1);
}

}  // namespace tokenline
