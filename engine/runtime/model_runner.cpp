#include "engine/runtime/model_runner.h"

#include <algorithm>
#include <cassert>

namespace tokenline {

ModelRunner::ModelRunner(ModelShape shape, ModelWeights weights, const RunnerConfig& config, Clock& clock)
    : shape_(std::move(shape)), weights_(std::move(weights)), config_(config), clock_(clock) {
  for (int32_t r = 0; r < config.dp_ranks; ++r) {
    passes_.push_back(
        std::make_unique<ForwardPass>(shape_, weights_, config.total_pages, config.page_tokens));
  }
  outputs_.resize(static_cast<size_t>(config.dp_ranks));
}

void ModelRunner::set_prompt(RequestId id, std::vector<int32_t> token_ids) {
  tokens_[id] = std::move(token_ids);
}

void ModelRunner::forget(RequestId id) {
  tokens_.erase(id);
}

const std::vector<int32_t>* ModelRunner::tokens(RequestId id) const {
  auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

// Flattens one rank's batch: each entry's new tokens (positions context .. context + new - 1) read from
// its token list, its page ids cut to the pages those positions need, and one sampling row for an entry
// that samples (a last prefill chunk or a decode).
bool ModelRunner::build_input(const Batch& batch, const std::vector<std::vector<int32_t>>& pages) {
  input_.clear();
  sampling_ids_.clear();
  const auto page_tokens = static_cast<int64_t>(config_.page_tokens);
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    const BatchEntry& e = batch.entries[i];
    auto it = tokens_.find(e.id);
    const int64_t end = e.context_tokens + e.new_tokens;
    if (it == tokens_.end() || static_cast<int64_t>(it->second.size()) < end || i >= pages.size())
      return false;
    const int64_t need_pages = (end + page_tokens - 1) / page_tokens;
    if (static_cast<int64_t>(pages[i].size()) < need_pages) return false;
    const auto seq = static_cast<int32_t>(i);
    for (int64_t p = e.context_tokens; p < end; ++p) {
      input_.token_ids.push_back(it->second[static_cast<size_t>(p)]);
      input_.seq.push_back(seq);
      input_.pos.push_back(static_cast<int32_t>(p));
    }
    input_.indices.insert(input_.indices.end(), pages[i].begin(),
                          pages[i].begin() + static_cast<std::ptrdiff_t>(need_pages));
    input_.indptr.push_back(static_cast<int32_t>(input_.indices.size()));
    input_.last_page_len.push_back(static_cast<int32_t>(end - (need_pages - 1) * page_tokens));
    input_.max_context = std::max(input_.max_context, static_cast<int32_t>(end));
    if (e.phase == Phase::kDecode || e.last_chunk) {
      input_.sample_rows.push_back(static_cast<int32_t>(input_.token_ids.size()) - 1);
      sampling_ids_.push_back(e.id);
    }
  }
  return true;
}

void ModelRunner::append_spans(int32_t rank, double start_s, const ForwardOutput& out,
                               StepOutcome& outcome) const {
  // Whole-step totals per op, laid back to back in ledger order (as the sim's cost backends do).
  int64_t t_ns = to_whole_ns(start_s);
  for (int i = 0; i < kRunOpCount; ++i) {
    const int64_t d_ns = to_whole_ns(out.op_s[static_cast<size_t>(i)]);
    if (d_ns <= 0) continue;
    outcome.ops.push_back(OpSpan{.name = shape_.op_name(static_cast<RunOp>(i)),
                                 .stream = Stream::kCompute,
                                 .rank = rank,
                                 .start_s = ns_to_s(t_ns),
                                 .duration_s = ns_to_s(d_ns)});
    t_ns += d_ns;
  }
}

StepOutcome ModelRunner::execute(const StepBatches& step) {
  StepOutcome outcome;
  const double step_start_s = clock_.now_s();
  for (size_t r = 0; r < step.ranks.size(); ++r) {
    const Batch& batch = step.ranks[r];
    if (batch.empty()) continue;
    [[maybe_unused]] const bool ok = r < pages_.size() && build_input(batch, pages_[r]);
    assert(ok && "a batch entry without its tokens or pages: set_prompt / set_step_pages first");
    const double rank_start_s = clock_.now_s() - step_start_s;
    ForwardOutput& out = outputs_[r];
    passes_[r]->run(input_, clock_, out);
    for (size_t i = 0; i < sampling_ids_.size(); ++i) tokens_[sampling_ids_[i]].push_back(out.sampled[i]);
    if (config_.op_detail) append_spans(static_cast<int32_t>(r), rank_start_s, out, outcome);
  }
  outcome.duration_s = ns_to_s(to_whole_ns(clock_.now_s() - step_start_s));
  return outcome;
}

}  // namespace tokenline
