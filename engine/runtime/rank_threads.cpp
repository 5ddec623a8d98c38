#include "engine/runtime/rank_threads.h"

#include <cassert>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "engine/runtime/rank_cpus.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline {

struct RankThreads::Impl {
  std::mutex mu;
  std::condition_variable wake, done;
  uint64_t generation = 0;  // bumped once per run(); a thread runs each generation once
  int32_t pending = 0;      // active ranks of this generation not yet finished
  bool stopping = false;
  // This generation's: which ranks run (a copy: a rank idle in it may wake after run() returned) and what.
  std::vector<bool> active;
  const std::function<void(int32_t)>* fn = nullptr;
  std::vector<std::exception_ptr> errors;  // per rank, this generation
  std::vector<std::thread> threads;

  void loop(int32_t rank, const std::vector<int>& cpus, int64_t workers) {
    const cpu::ScopedWorkerCap cap(workers);
    bind_this_thread(cpus);
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping) return;
      seen = generation;
      const auto r = static_cast<size_t>(rank);
      if (!active[r]) continue;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*fn)(rank);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      errors[r] = error;
      if (--pending == 0) done.notify_one();
    }
  }
};

RankThreads::RankThreads(int32_t ranks, const std::vector<int>& allowed, int64_t workers)
    : impl_(std::make_unique<Impl>()) {
  impl_->errors.resize(static_cast<size_t>(ranks));
  for (int32_t g = 0; g < ranks; ++g)
    impl_->threads.emplace_back(
        [this, g, workers, cpus = rank_cpus(allowed, g, workers)] { impl_->loop(g, cpus, workers); });
}

RankThreads::~RankThreads() {
  {
    const std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  for (std::thread& t : impl_->threads) t.join();
}

void RankThreads::run(const std::vector<bool>& active, const std::function<void(int32_t)>& fn) {
  assert(active.size() == impl_->threads.size());
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->active = active;
  impl_->fn = &fn;
  impl_->pending = 0;
  for (bool a : active) impl_->pending += a ? 1 : 0;
  for (std::exception_ptr& e : impl_->errors) e = nullptr;
  if (impl_->pending == 0) return;
  ++impl_->generation;
  impl_->wake.notify_all();
  impl_->done.wait(lock, [&] { return impl_->pending == 0; });
  for (const std::exception_ptr& e : impl_->errors)
    if (e) std::rethrow_exception(e);
}

int32_t RankThreads::size() const {
  return static_cast<int32_t>(impl_->threads.size());
}

}  // namespace tokenline
