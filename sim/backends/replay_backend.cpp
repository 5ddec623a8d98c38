#include "sim/backends/replay_backend.h"

#include <algorithm>

namespace tokenline {
namespace {

std::vector<RecordedEntry> entries_of(const Batch& batch) {
  std::vector<RecordedEntry> out;
  out.reserve(batch.entries.size());
  for (const BatchEntry& e : batch.entries) {
    const bool prefill = e.phase == Phase::kPrefill;
    out.push_back(RecordedEntry{.id = e.id,
                                .prefill = prefill,
                                .new_tokens = e.new_tokens,
                                .context_tokens = prefill ? e.context_tokens : 0});
  }
  return out;
}

std::string entry_or_nothing(const std::vector<RecordedEntry>& entries, size_t i) {
  return i < entries.size() ? to_string(entries[i]) : std::string("nothing");
}

// The first entry where a recorded batch and a planned one differ, "" when they are the same.
std::string composition_mismatch(const std::vector<RecordedEntry>& recorded,
                                 const std::vector<RecordedEntry>& planned) {
  const auto [r, p] =
      std::mismatch(recorded.begin(), recorded.end(), planned.begin(), planned.end(),
                    [](const RecordedEntry& a, const RecordedEntry& b) { return a.same_decision(b); });
  if (r == recorded.end() && p == planned.end()) return {};
  const auto i = static_cast<size_t>(r - recorded.begin());
  return "entry " + std::to_string(i) + ": recorded " + entry_or_nothing(recorded, i) + ", planned " +
         entry_or_nothing(planned, i) + " (recorded " + std::to_string(recorded.size()) +
         " entries, planned " + std::to_string(planned.size()) + ")";
}

}  // namespace

ReplayBackend::ReplayBackend(RecordedInstance recorded) : recorded_(std::move(recorded)) {
  // One stored copy per distinct name; OpSpan keeps a pointer into it for the backend's lifetime.
  for (const RecordedStep& s : recorded_.steps) {
    for (const RecordedOp& op : s.ops) {
      if (std::find(names_.begin(), names_.end(), op.name) == names_.end()) names_.push_back(op.name);
    }
  }
}

void ReplayBackend::diverge(const std::string& why) {
  if (divergences_++ == 0) first_divergence_ = why;
}

std::string ReplayBackend::rank_mismatch(const Batch* planned, const RecordedRankStep* recorded) {
  const int64_t planned_tokens = planned != nullptr ? planned->total_tokens() : 0;
  const auto planned_requests = static_cast<int64_t>(planned != nullptr ? planned->entries.size() : 0);
  if (recorded != nullptr && recorded->has_batch) {
    const std::vector<RecordedEntry> entries =
        planned != nullptr ? entries_of(*planned) : std::vector<RecordedEntry>{};
    compared_entries_ += static_cast<int64_t>(std::min(entries.size(), recorded->batch.size()));
    std::string why = composition_mismatch(recorded->batch, entries);
    if (!why.empty()) ++composition_divergences_;
    return why;
  }
  const int64_t recorded_tokens = recorded != nullptr ? recorded->tokens : 0;
  const int64_t recorded_requests = recorded != nullptr ? recorded->requests : 0;
  if (planned_tokens == recorded_tokens && planned_requests == recorded_requests) return {};
  return "recorded " + std::to_string(recorded_tokens) + " tokens in " + std::to_string(recorded_requests) +
         " requests, planned " + std::to_string(planned_tokens) + " tokens in " +
         std::to_string(planned_requests) + " requests";
}

void ReplayBackend::check_step(const StepBatches& step, const RecordedStep& rec) {
  const std::string at = "step " + std::to_string(step.step_index);
  if (rec.step != step.step_index) {
    diverge(at + ": the recording's next step is " + std::to_string(rec.step));
    return;
  }
  std::string first;  // this step's first mismatching rank
  int32_t ranks = static_cast<int32_t>(step.ranks.size());
  for (const RecordedRankStep& r : rec.ranks) ranks = std::max(ranks, r.rank + 1);
  for (int32_t rank = 0; rank < ranks; ++rank) {
    const auto planned = std::find_if(step.ranks.begin(), step.ranks.end(),
                                      [rank](const Batch& b) { return b.rank == rank && !b.empty(); });
    const auto recorded = std::find_if(rec.ranks.begin(), rec.ranks.end(), [rank](const RecordedRankStep& r) {
      return r.rank == rank && r.requests > 0;  // idle ranks' aligned spans (op detail) carry no work
    });
    const std::string why = rank_mismatch(planned != step.ranks.end() ? &*planned : nullptr,
                                          recorded != rec.ranks.end() ? &*recorded : nullptr);
    if (!why.empty() && first.empty()) first = at + " rank " + std::to_string(rank) + " " + why;
  }
  if (!first.empty()) diverge(first);
}

StepOutcome ReplayBackend::execute(const StepBatches& step) {
  StepOutcome outcome;
  if (next_ >= recorded_.steps.size()) {
    diverge("step " + std::to_string(step.step_index) + ": the recording has only " +
            std::to_string(recorded_.steps.size()) + " steps");
    return outcome;
  }
  const RecordedStep& rec = recorded_.steps[next_++];
  check_step(step, rec);
  outcome.duration_s = rec.duration_s;
  outcome.tier_load_s = rec.tier_load_s;  // the host tier's recorded copies (in duration_s already)
  outcome.tier_store_s = rec.tier_store_s;
  outcome.tier_stall_s = rec.tier_stall_s;
  outcome.accepted_drafts = accepted_drafts(step, rec);
  for (const RecordedOp& op : rec.ops) {
    const auto it = std::find(names_.begin(), names_.end(), op.name);
    outcome.ops.push_back(OpSpan{.name = it->c_str(),
                                 .stream = op.comm ? Stream::kComm : Stream::kCompute,
                                 .rank = op.rank,
                                 .start_s = op.start_s,
                                 .duration_s = op.duration_s});
  }
  return outcome;
}

// The MTP drafts each recorded decode accepted, per planned rank and entry; empty when none were recorded
// (MTP off), so the core commits one token per decode as it did.
std::vector<std::vector<int32_t>> ReplayBackend::accepted_drafts(const StepBatches& step,
                                                                 const RecordedStep& rec) {
  std::vector<std::vector<int32_t>> out;
  for (const RecordedRankStep& rank : rec.ranks) {
    for (size_t i = 0; i < rank.batch.size(); ++i) {
      if (rank.batch[i].accepted < 0) continue;
      out.resize(step.ranks.size());
      const auto r = static_cast<size_t>(rank.rank);
      if (r >= out.size()) continue;  // check_step reported the rank
      out[r].resize(rank.batch.size(), 0);
      out[r][i] = rank.batch[i].accepted;
    }
  }
  return out;
}

std::string replay_trace_path(const std::string& backend) {
  const std::string prefix = "replay:";
  return backend.rfind(prefix, 0) == 0 ? backend.substr(prefix.size()) : std::string();
}

}  // namespace tokenline
