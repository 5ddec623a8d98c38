// ModelRunner: the real engine's Executor. Executes a StepBatches through the model's op list (ledger op
// names) on a KernelSet (the CPU reference by default, CUDA where built and a device exists) and returns
// StepOutcome{duration_s, per-op spans}. Durations are whole nanoseconds (clock.h).
// Layout: dp_ranks attention groups of tp GPU ranks each (rank g = group * tp + tp_rank). Each rank holds
// its RankWeights slice and a ForwardPass; a group's ranks hold the same tokens and KV pages and sum their
// partial outputs with all-reduces; with ep > 1 (REQUIRES ep == dp_ranks * tp) routed experts are spread
// over every rank and rows travel by dispatch/combine. With more than one rank, every rank runs in its own
// thread on in-process communicators (host memory: the CPU set), timed by its own fork of the Clock; a
// step lasts until its last rank ends. Spans are those of each group's first rank (rank = group, as in
// sim). Keeps each live request's tokens (prompt + generated) and appends the token it samples. KV pages
// come from the core: the instance loop allocates each step's pages before executing it and passes them in
// the step's page tables (StepBatches::pages). With mtp_draft_tokens = k (the core's too) each rank then runs
// the MTP layer: a decode entry's rows are [last token, k drafts], verified greedily (speculation.h:
// the emitted tokens are those of decoding without drafts) and StepOutcome::accepted_drafts says how many
// stood; every entry that emitted gets its next k drafts (the MTP layer chained, ForwardPass::draft).
// With host_pages, each rank keeps a host KV tier (host_kv_pool.h) and makes the step's host-tier copies
// (StepBatches::tier_copies) before its forward: their measured time is the step's tier_store_s and
// tier_load_s, and all of it stalls the step (the CPU copies block; nothing overlaps them).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/core/executor.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/model_shape.h"
#include "engine/runtime/model_weights.h"

namespace tokenline {

// Replaces the engine's greedy choice of a request's next token (serve: sampling, logprobs). Called on the
// loop's thread inside execute, once per emitted token, when MTP is off (drafts are verified greedily).
class TokenChooser {
 public:
  virtual ~TokenChooser() = default;
  // logits: the row the token is chosen from ([vocab]); greedy: the engine's argmax of it.
  virtual int32_t choose(RequestId id, std::span<const float> logits, int32_t greedy) = 0;
};

struct KernelSet;  // kernels/kernel_set.h (kept out of this header: kernels' KvLayout meets engine/model's)

struct RunnerConfig {
  int32_t dp_ranks = 1;     // attention groups, each with its own requests and KV (the core's DP ranks)
  int32_t tp = 1;           // GPU ranks per attention group
  int32_t ep = 1;           // 1, or dp_ranks * tp: routed experts spread over every rank
  int64_t total_pages = 0;  // per attention group, as the core's KvConfig
  int32_t page_tokens = 64;
  int32_t mtp_draft_tokens = 0;        // k: the MTP layer chained k times per decode step (0: off)
  int64_t host_pages = 0;              // host KV tier slots per attention group, as the core's (0: none)
  int64_t window_pages = 0;            // window-layer pages per group, as the core's WindowKvConfig
  int64_t state_slots = 0;             // recurrent-state slots per group, as the core's StatePool
  bool op_detail = true;               // fill StepOutcome::ops
  const KernelSet* kernels = nullptr;  // nullptr: cpu_kernel_set()
};

// Why a layout cannot run, or empty: tp must divide heads, dense and shared intermediate sizes and the
// vocabulary; ep must be 1 or every rank, dividing the experts (ep == 1: tp divides moe_inter); more
// than one rank needs host memory; MTP drafts only with an MTP layer; a GQA model runs on one GPU rank per
// attention group (tp 1, ep 1) on a backend with its kernels (the CPU set), with no host KV tier, and
// with window pages / state slots where it has window / Gated DeltaNet layers.
std::string runner_layout_error(const ModelShape& shape, const RunnerConfig& config);

// True when the backend (nullptr: the CPU set) has the kernels the model's layers need: a GQA hybrid's
// GQA and Gated DeltaNet kernels are CPU-only.
bool backend_runs_model(const ModelShape& shape, const KernelSet* kernels);

class ModelRunner final : public Executor {
 public:
  // REQUIRES: clock outlives the runner; runner_layout_error(shape, config) is empty.
  ModelRunner(ModelShape shape, const ModelWeights& weights, const RunnerConfig& config, Clock& clock);
  ~ModelRunner() override;

  // The request's prompt token ids (each < vocab); the runner appends what it samples.
  void set_prompt(RequestId id, std::vector<int32_t> token_ids);
  void forget(RequestId id);
  // Tests: the drafts the request's next decode verifies (at least its draft_tokens).
  void set_drafts(RequestId id, std::vector<int32_t> tokens);
  const std::vector<int32_t>* tokens(RequestId id) const;  // nullptr when unknown
  // REQUIRES: step.pages[r] covers the context + new tokens of every entry of each non-empty batch r.
  StepOutcome execute(const StepBatches& step) override;
  bool reads_page_tables() const override { return true; }
  // Logits of the last step's sampling rows of an attention group ([rows, vocab]), in entry order.
  const std::vector<float>& last_logits(int32_t group) const;
  const ModelShape& shape() const { return shape_; }
  // REQUIRES: chooser outlives the runner (or is reset to nullptr first); MTP off.
  void set_token_chooser(TokenChooser* chooser) { chooser_ = chooser; }

 private:
  struct Ranks;  // the ranks' weights, passes, inputs, outputs and communicators (model_runner.cpp)

  bool build_input(const Batch& batch, const BatchPages& pages, int32_t group);
  void run_ranks(const std::vector<bool>& active, std::vector<double>& start_s);
  void append_spans(int32_t group, double start_s, StepOutcome& outcome) const;
  void apply_tier_copies(const StepBatches& step, StepOutcome& outcome);
  void apply_results(int32_t group, StepOutcome& outcome);

  ModelShape shape_;
  RunnerConfig config_;
  Clock& clock_;
  std::unique_ptr<Ranks> ranks_;
  std::map<RequestId, std::vector<int32_t>> tokens_;  // lookups only
  std::map<RequestId, std::vector<int32_t>> drafts_;  // the MTP drafts each request's next decode verifies
  TokenChooser* chooser_ = nullptr;                   // nullptr: greedy
};

}  // namespace tokenline
