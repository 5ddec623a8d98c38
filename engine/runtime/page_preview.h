// preview_step_pages: the page ids each entry of a planned step will hold. The core allocates pages in
// commit(), after the step has executed, but a real engine writes KV before that. Commit's page decisions
// come first and do not depend on the outcome (release the preempted, admit with the matched prefix, grow
// each entry to its reservation target), so the runtime replays them on a copy of each rank's KvManager
// and reads the copy's page tables. Mirrors Scheduler::commit and Scheduler::kv_target_tokens; the runtime
// tests check the pages against the core's own tables after commit.
#pragma once

#include "engine/core/instance.h"
#include "engine/runtime/model_runner.h"

namespace tokenline {

// REQUIRES: plan came from instance.plan() with no commit since.
StepPages preview_step_pages(const Instance& instance, const StepPlan& plan);

}  // namespace tokenline
