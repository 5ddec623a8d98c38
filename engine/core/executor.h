// Executor: the seam between the shared core and a world. In sim it is a cost model (the step's duration is
// predicted from the token ledger); in real it runs kernels and measures. The core never reads a clock:
// durations come back in StepOutcome and the driver advances its own clock by them.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/batch.h"
#include "engine/core/tier_copy.h"

namespace tokenline {

enum class Stream { kCompute, kComm };

struct OpSpan {
  const char* name = "";  // a ledger op name with static storage ("sparse_mla", "dispatch", ...)
  Stream stream = Stream::kCompute;
  int32_t rank = 0;
  double start_s = 0;  // relative to the step's start
  double duration_s = 0;
  const char* source = nullptr;  // what priced it ("roofline" | "profile", static storage); null: measured
};

struct StepOutcome {
  double duration_s = 0;    // the whole step (all ranks, lockstep): the driver's clock advance
  std::vector<OpSpan> ops;  // filled when the driver asked for op detail
  // Per rank, per batch entry, in plan order: MTP drafts accepted (empty when MTP is off). The scheduler
  // commits 1 + accepted tokens for each decode entry.
  std::vector<std::vector<int32_t>> accepted_drafts;
  // Host-tier transfers the step waited on (0 without a host tier): the slowest rank's load-back and
  // write-back times on its host link, and how much longer the step took for them (part of duration_s).
  double tier_load_s = 0;
  double tier_store_s = 0;
  double tier_stall_s = 0;
};

// One step of an instance: a batch per attention rank, executed together (every MoE layer synchronizes).
struct StepBatches {
  int64_t step_index = 0;
  std::vector<Batch> ranks;  // size = attention-DP degree; an idle rank has an empty batch
  // Per rank, the page table of its batch's entries; filled by the instance loop only for executors that
  // read page tables (empty otherwise).
  std::vector<BatchPages> pages;
  // Per rank, the host-tier page copies to make before the step, in order (attach_tier_copies; only for
  // executors that read page tables, and only with a host tier that logs them: empty otherwise).
  std::vector<std::vector<TierCopy>> tier_copies;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // REQUIRES: at least one rank's batch is non-empty; step.pages filled when reads_page_tables().
  // Must not throw (SimGrid aborts on escaping exceptions).
  virtual StepOutcome execute(const StepBatches& step) = 0;
  // True when execute reads the batches' page tables (StepBatches::pages): the instance loop then allocates
  // the step's pages before executing it (the real engine's kernels write KV there). Cost models do not.
  virtual bool reads_page_tables() const { return false; }
};

}  // namespace tokenline
