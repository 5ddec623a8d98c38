// ContextHold: TensorRT-LLM's two rules that keep scheduled context (prefill) requests out of a step so that
// more of them start together (TensorRT-LLM 1.1 / 1.2, tensorrt_llm/_torch/pyexecutor/py_executor.py
// PyExecutor._schedule, _balance_adp_requests and _waiting_requests; the knobs are llm_args.py
// TorchLlmArgs.batch_wait_timeout_iters / batch_wait_max_tokens_ratio and AttentionDpConfig). Both run after
// the capacity and micro-batch schedulers, on what they scheduled, and hold every context request of the
// step (the generation requests run). Pure: the counters live in the caller (Instance), which applies the
// next ones when the step commits.
#pragma once

#include <cstdint>
#include <span>

namespace tokenline {

struct ContextHoldConfig {
  // Batch waiting, attention TP only ("not self.enable_attention_dp and self.enable_batch_waiting"): while
  // a step has both context and generation requests, its context requests wait until either
  // batch_wait_timeout_iters steps have waited or the step's scheduled tokens (each context request's
  // whole prompt, each generation request's 1 + drafts) reach batch_wait_max_tokens_ratio x max_num_tokens.
  // On when either knob is positive (py_executor.py enable_batch_waiting); both default 0 (off).
  int32_t batch_wait_timeout_iters = 0;
  double batch_wait_max_tokens_ratio = 0;
  int64_t max_num_tokens = 0;  // the step's token budget the ratio is of (max_num_tokens)
  // Attention-DP balancing (enable_attention_dp and attention_dp_config.enable_balance; default off):
  // context requests start only in a step where every rank has one (waiting at most timeout_iters steps,
  // and not at all while some rank has no generation request), and once they all have, a further
  // batching_wait_iters steps while every rank also has generation requests. AttentionDpConfig defaults:
  // timeout_iters 50, batching_wait_iters 10.
  bool adp_balance = false;
  int32_t adp_timeout_iters = 50;
  int32_t adp_batching_wait_iters = 10;
  // A rank with max_batch_size generation requests has no free context slot (all_ranks_have_free_ctx_slots).
  int64_t max_batch_size = 2048;

  bool batch_waiting() const { return batch_wait_timeout_iters > 0 || batch_wait_max_tokens_ratio > 0; }
  bool any() const { return batch_waiting() || adp_balance; }
};

// The rule's iteration counters (py_executor.py adp_ctx_waiting_iters_count,
// adp_ctx_batching_wait_iters_count, batch_wait_iters_count).
struct ContextHoldState {
  int32_t adp_waiting_iters = 0;
  int32_t adp_batching_iters = 0;
  int32_t batch_wait_iters = 0;
  bool operator==(const ContextHoldState&) const = default;
};

// What one attention rank's scheduler put in the step before the rule runs.
struct RankSchedule {
  int64_t context_requests = 0;
  int64_t generation_requests = 0;
  int64_t scheduled_tokens = 0;  // context requests' prompt tokens + generation requests' tokens
};

struct ContextHoldDecision {
  bool hold = false;      // this step runs without its context requests
  ContextHoldState next;  // the counters once the step commits
};

// The rule for one step of an instance with ranks.size() attention ranks (1: attention TP, the batch
// waiting rule; more: attention DP, the balancing rule). REQUIRES: !ranks.empty().
ContextHoldDecision decide_context_hold(const ContextHoldConfig& config, std::span<const RankSchedule> ranks,
                                        const ContextHoldState& state);

}  // namespace tokenline
