// run_on_workers: parallel_for's threads. Each calling thread keeps its own workers alive between calls
// (started when a call first needs them, joined when the calling thread exits) instead of starting and
// joining a std::thread per call: a CPU decode step makes hundreds of short calls, and starting threads
// cost tens of microseconds each, more or less depending on where the scheduler placed them.
#pragma once

#include <cstdint>

namespace tokenline::cpu {

using WorkerChunk = void (*)(void* context, int64_t worker);

// Calls chunk(context, w) for every w in [0, workers): w = 0 on the calling thread, the others on its
// workers, and returns when all have returned. chunk must not throw.
void run_on_workers(int64_t workers, WorkerChunk chunk, void* context);

}  // namespace tokenline::cpu
