// RankThreads: the model runner's rank threads under DP / TP, started once and kept (a real engine keeps
// one process per GPU rank; it does not start one per step). Each is bound to its own CPUs once
// (rank_cpus.h) and keeps its kernel workers (kernels/cpu/worker_pool.h) between steps: starting a thread
// per rank per step cost thread starts and affinity calls every step, and on a many-core machine each
// rank's kernel workers were started again with it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace tokenline {

class RankThreads {
 public:
  // Starts `ranks` threads; rank g's is bound to rank_cpus(allowed, g, workers) (allowed: the CPUs the
  // process may use, allowed_cpus()) and runs its kernel loops on at most `workers` threads.
  RankThreads(int32_t ranks, const std::vector<int>& allowed, int64_t workers);
  ~RankThreads();  // stops and joins every thread
  RankThreads(const RankThreads&) = delete;
  RankThreads& operator=(const RankThreads&) = delete;

  // Calls fn(g) on rank g's thread for every g with active[g], and returns when all have returned. An
  // exception from fn is rethrown here (the first, by rank) once every rank has finished.
  void run(const std::vector<bool>& active, const std::function<void(int32_t)>& fn);

  int32_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenline
