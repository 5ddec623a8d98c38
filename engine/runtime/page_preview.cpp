#include "engine/runtime/page_preview.h"

#include <cassert>

namespace tokenline {
namespace {

// Scheduler::kv_target_tokens: the tokens an entry's pages must cover after the step.
int64_t target_tokens(const Scheduler& rank, const Request& r, const BatchEntry& e) {
  switch (rank.kv().config().reservation) {
    case ReservationPolicy::kWholeRequest:
      return rank.config().role == InstanceRole::kPrefillOnly ? r.record.prompt_tokens : r.max_kv_tokens();
    case ReservationPolicy::kIncremental:
      return e.context_tokens + e.new_tokens;
  }
  return e.context_tokens + e.new_tokens;
}

}  // namespace

StepPages preview_step_pages(const Instance& instance, const StepPlan& plan) {
  StepPages pages(plan.batches.ranks.size());
  for (size_t r = 0; r < plan.batches.ranks.size(); ++r) {
    const Batch& batch = plan.batches.ranks[r];
    const RankDecision& decision = plan.ranks[r];
    if (batch.empty()) continue;
    const Scheduler& rank = instance.rank(static_cast<int32_t>(r));
    KvManager kv = rank.kv();
    for (int32_t slot : decision.preemptions) kv.release(slot);
    for (const PlannedAdmission& a : decision.admissions) kv.admit(a.slot, a.match, 0);
    for (size_t i = 0; i < batch.entries.size(); ++i) {
      const int32_t slot = decision.entry_slots[i];
      [[maybe_unused]] const bool ok =
          kv.grow(slot, target_tokens(rank, rank.request(slot), batch.entries[i]));
      assert(ok && "planned pages not available");
    }
    for (int32_t slot : decision.entry_slots) {
      const std::span<const PageId> table = kv.page_table(slot);
      pages[r].emplace_back(table.begin(), table.end());
    }
  }
  return pages;
}

}  // namespace tokenline
