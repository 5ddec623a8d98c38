// Scheduler::Budget: what is left of one planning pass's budgets. Private to scheduler*.cpp.
#pragma once

#include <cstdint>

#include "engine/core/scheduler.h"

namespace tokenline {

// What is left of a step's three budgets while planning.
struct Scheduler::Budget {
  int64_t tokens = 0;        // tokens the step may still compute
  int64_t pages = 0;         // pages still obtainable (free + evictable, minus what is planned)
  int64_t running = 0;       // admissions left under max_running_requests
  int64_t window_pages = 0;  // window-pool pages still free (kv_manager.h has_window; 0 and unused without)
  bool preempted = false;
  bool retracted = false;
  int64_t victim_cursor = 0;  // running_ index of the next preemption candidate, from the back
  // kEstimate only
  int64_t decode_reserve_pages = 0;  // pages the decodes still to be planned need (prefill may not take them)
  // Estimated free tokens left for admissions: pages at the pass's start x page tokens - what the running
  // requests are estimated to still write. Made when an admission first needs it (estimate_known): a decode
  // pass never does, and a pass that preempted admits nothing, so the running set it sees is the pass's.
  int64_t estimate_pages = 0;
  bool estimate_known = false;
  int64_t estimate_tokens = 0;
};

}  // namespace tokenline
