#include "kernels/cpu/worker_pool.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace tokenline::cpu {
namespace {

// One calling thread's workers. A call bumps the generation; worker i runs chunk(context, i) when i is
// below the call's worker count, and the last to finish wakes the caller.
class WorkerPool {
 public:
  WorkerPool() = default;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void run(int64_t workers, WorkerChunk chunk, void* context) {
    grow(workers - 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      chunk_ = chunk;
      context_ = context;
      helpers_ = workers - 1;
      pending_ = workers - 1;
      ++generation_;
    }
    wake_.notify_all();
    chunk(context, 0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  // Starts workers up to `helpers`; only the calling thread changes generation_, so a new worker starts
  // from the generation before the call that needs it.
  void grow(int64_t helpers) {
    while (static_cast<int64_t>(threads_.size()) < helpers) {
      const int64_t index = static_cast<int64_t>(threads_.size()) + 1;
      threads_.emplace_back([this, index, seen = generation_] { loop(index, seen); });
    }
  }

  void loop(int64_t index, uint64_t seen) {
    while (true) {
      WorkerChunk chunk = nullptr;
      void* context = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (index > helpers_) continue;  // this call needs fewer workers
        chunk = chunk_;
        context = context_;
      }
      chunk(context, index);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  uint64_t generation_ = 0;
  WorkerChunk chunk_ = nullptr;
  void* context_ = nullptr;
  int64_t helpers_ = 0, pending_ = 0;
  bool stop_ = false;
};

}  // namespace

void run_on_workers(int64_t workers, WorkerChunk chunk, void* context) {
  thread_local WorkerPool pool;
  pool.run(workers, chunk, context);
}

}  // namespace tokenline::cpu
