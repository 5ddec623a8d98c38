// What one forward step costs, op by op and collective by collective, and how long it takes on the busiest
// GPU. One code path serves the uniform ledgers of `tokenline ledger` (a decode step of b requests at
// context L, a prefill chunk) and the simulator's heterogeneous steps (step_cost over per-rank SeqWork lists,
// called ~1e6 times per run: no allocation, no strings). Each op's time is asked of the cost model's
// TimeSource (time_source.h); step_cost itself does not know which one it is.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "cost/cost_model.h"
#include "cost/term.h"

namespace tokenline {

// The cost of one step: per_rank[r] lists attention rank r's sequences (per_rank.size() <= dp_attention;
// missing ranks are idle). Times are those of the busiest GPU. No allocation (but
// for an own profile under DP: one time per rank, for each group's peers' load).
StepCost step_cost(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank);
// The same with MoE load imbalance (moe_load.h): the busiest EP GPU holds expert_imbalance (>= 1) times the
// mean token-expert pairs, which scales its expert GEMM work and the dispatch/combine messages.
StepCost step_cost(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                   double expert_imbalance);
// Convenience for one rank (pure TP, or DP with the other ranks idle).
StepCost step_cost(const CostModel& cm, std::span<const SeqWork> rank0);

// Uniform decode step: every attention rank decodes `batch` requests at `context` tokens of context
// (under DP attention `batch` counts one rank's requests, as the seed's b does).
StepCost decode_step(const CostModel& cm, int64_t batch, int64_t context);

// One prefill chunk of `tokens` after `prefix` cached tokens on rank 0.
StepCost prefill_step(const CostModel& cm, int64_t tokens, int64_t prefix, bool last_chunk);

// A prompt of `prompt_tokens` after `prefix` cached tokens, prefilled in chunks of `chunk_tokens` on
// rank 0 (the seed's 1M prefill: 32 chunks of 32768). The last chunk samples the first token.
struct ChunkCost {
  int index = 0;
  int64_t tokens = 0;
  int64_t prefix = 0;
  StepCost cost;
};
std::vector<ChunkCost> prefill_chunks(const CostModel& cm, int64_t prompt_tokens, int64_t chunk_tokens,
                                      int64_t prefix = 0);

// PD disaggregation: bytes of one request's KV + indexer cache handed from prefill to decode.
struct PdTransfer {
  double kv_bytes = 0;
  double indexer_bytes = 0;
  double total_bytes() const { return kv_bytes + indexer_bytes; }
  double time_s(Link link, const CostModel& cm) const;  // bytes / that link's bandwidth (+ latency)
};
PdTransfer pd_transfer(const CostModel& cm, int64_t context);

// What an op span names as its source: time_source_name(term.source) when a profile prices cm, null for
// a roofline-only model (whose traces keep their bytes). Static storage.
const char* span_source(const CostModel& cm, const Term& term);

}  // namespace tokenline
