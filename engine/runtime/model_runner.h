// ModelRunner: the real engine's Executor. Executes a StepBatches through the model's op list (ledger op
// names) on the CPU reference kernels, one ForwardPass (and paged KV cache) per attention-DP rank, run
// one after another; times every op with the Clock and returns StepOutcome{duration_s, per-op spans}.
// Durations are whole nanoseconds (clock.h). Keeps each live request's tokens (prompt + generated) and
// appends the token it samples. KV pages come from the core: before each execute the driver calls
// Instance::allocate and passes the page ids of every entry (allocated_step_pages). DP ranks run one
// after another on the calling thread; each rank holds all weights (no TP/EP sharding yet, so no
// allreduce/dispatch/combine spans). MTP drafting is not implemented: accepted_drafts stays empty (run
// the core with mtp_draft_tokens = 0).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "engine/core/executor.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/forward_pass.h"
#include "engine/runtime/model_shape.h"
#include "engine/runtime/model_weights.h"

namespace tokenline {

// [rank][entry]: the page ids (token order) of each batch entry's request, covering at least its
// context + new tokens.
using StepPages = std::vector<std::vector<std::vector<int32_t>>>;

struct RunnerConfig {
  int32_t dp_ranks = 1;
  int64_t total_pages = 0;  // per rank, as the core's KvConfig
  int32_t page_tokens = 64;
  bool op_detail = true;  // fill StepOutcome::ops
};

class ModelRunner final : public Executor {
 public:
  // REQUIRES: clock outlives the runner.
  ModelRunner(ModelShape shape, ModelWeights weights, const RunnerConfig& config, Clock& clock);

  // The request's prompt token ids (each < vocab); the runner appends what it samples.
  void set_prompt(RequestId id, std::vector<int32_t> token_ids);
  void forget(RequestId id);
  const std::vector<int32_t>* tokens(RequestId id) const;  // nullptr when unknown
  // REQUIRES: called before each execute with the pages of that step's entries.
  void set_step_pages(StepPages pages) { pages_ = std::move(pages); }

  StepOutcome execute(const StepBatches& step) override;
  // Logits of the last step's sampling rows, per rank ([rows, vocab]), in entry order.
  const std::vector<float>& last_logits(int32_t rank) const {
    return outputs_[static_cast<size_t>(rank)].logits;
  }
  const ModelShape& shape() const { return shape_; }

 private:
  bool build_input(const Batch& batch, const std::vector<std::vector<int32_t>>& pages);
  void append_spans(int32_t rank, double start_s, const ForwardOutput& out, StepOutcome& outcome) const;

  ModelShape shape_;
  ModelWeights weights_;
  RunnerConfig config_;
  Clock& clock_;
  std::vector<std::unique_ptr<ForwardPass>> passes_;  // per rank
  std::vector<ForwardOutput> outputs_;                // per rank
  std::map<RequestId, std::vector<int32_t>> tokens_;  // lookups only
  StepPages pages_;
  ForwardInput input_;
  std::vector<RequestId> sampling_ids_;  // parallel to input_.sample_rows
};

}  // namespace tokenline
