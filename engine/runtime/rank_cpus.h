// Which CPUs a rank thread of the real engine runs on. Under DP / TP the model runner runs one thread per
// rank, and on a machine with fewer cores than ranks (dp2-tp2-ep4 on 2 cores: 4 threads) the OS moved them
// between cores at every time slice: one-sequence decode steps of one shape took 4.4 - 8.5 ms from step to
// step (held-out step MAPE 15.6%). Bound, each rank keeps its own cores (rank g: `count` CPUs from g x count,
// wrapping around the CPUs the process may use), as a GPU rank keeps its device; the kernel workers a rank
// thread starts inherit its mask.
#pragma once

#include <cstdint>
#include <vector>

namespace tokenline {

// The CPUs rank `rank` gets: `count` of `allowed` (in their order) from rank x count, wrapping around;
// empty when `allowed` is empty. Pure: the assignment, testable on any machine.
std::vector<int> rank_cpus(const std::vector<int>& allowed, int32_t rank, int64_t count);

// The CPUs the calling thread may run on (its affinity mask: the process's unless the thread was bound),
// ascending; empty if it cannot be read.
std::vector<int> allowed_cpus();

// Binds the calling thread to `cpus` (threads it starts afterwards inherit the mask). False, and the
// thread left as it was, when `cpus` is empty or the OS refuses.
bool bind_this_thread(const std::vector<int>& cpus);

}  // namespace tokenline
