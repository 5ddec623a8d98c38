#include "engine/runtime/rank_cpus.h"

#include <pthread.h>
#include <sched.h>

namespace tokenline {

std::vector<int> rank_cpus(const std::vector<int>& allowed, int32_t rank, int64_t count) {
  std::vector<int> cpus;
  if (allowed.empty()) return cpus;
  const auto n = static_cast<int64_t>(allowed.size());
  for (int64_t k = 0; k < count && k < n; ++k)
    cpus.push_back(allowed[static_cast<size_t>((rank * count + k) % n)]);
  return cpus;
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  return cpus;
}

bool bind_this_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int c : cpus) CPU_SET(c, &mask);
  return pthread_setaffinity_np(pthread_self(), sizeof mask, &mask) == 0;
}

}  // namespace tokenline
