// rank_cpus: each rank its own CPUs, wrapping around when ranks outnumber them; bind_this_thread: the
// thread's mask becomes the set asked for (checked on a thread of its own, so the test process keeps its
// mask).
#include "engine/runtime/rank_cpus.h"

#include <pthread.h>
#include <sched.h>

#include <catch2/catch.hpp>
#include <thread>

namespace tokenline {

TEST_CASE("ranks get their own CPUs and wrap around when they outnumber them", "[rank_cpus]") {
  // dp2-tp2 on 2 CPUs: ranks 0 and 2 share CPU 0, ranks 1 and 3 CPU 1 - each group's two ranks apart.
  const std::vector<int> two = {0, 1};
  CHECK(rank_cpus(two, 0, 1) == std::vector<int>{0});
  CHECK(rank_cpus(two, 1, 1) == std::vector<int>{1});
  CHECK(rank_cpus(two, 2, 1) == std::vector<int>{0});
  CHECK(rank_cpus(two, 3, 1) == std::vector<int>{1});
  // 4 ranks on 16 CPUs: 4 each, disjoint.
  std::vector<int> sixteen;
  for (int c = 0; c < 16; ++c) sixteen.push_back(c);
  CHECK(rank_cpus(sixteen, 2, 4) == std::vector<int>{8, 9, 10, 11});
  // The process's own CPUs, whatever their numbers; never more than there are.
  CHECK(rank_cpus({3, 7, 9}, 1, 2) == std::vector<int>{9, 3});
  CHECK(rank_cpus({3, 7, 9}, 0, 5) == std::vector<int>{3, 7, 9});
  CHECK(rank_cpus({}, 0, 1).empty());
}

TEST_CASE("a bound thread runs on exactly the CPUs it asked for", "[rank_cpus]") {
  const std::vector<int> allowed = allowed_cpus();
  REQUIRE(!allowed.empty());
  const std::vector<int> want = rank_cpus(allowed, 1, 1);
  std::vector<int> got;
  bool bound = false;
  std::thread t([&] {
    bound = bind_this_thread(want);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    pthread_getaffinity_np(pthread_self(), sizeof mask, &mask);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) got.push_back(c);
  });
  t.join();
  CHECK(bound);
  CHECK(got == want);
  CHECK(allowed_cpus() == allowed);  // this thread untouched
  CHECK_FALSE(bind_this_thread({}));
}

}  // namespace tokenline
