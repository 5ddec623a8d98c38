#include "plan/ledger_prune.h"

#include <cstdio>

#include "cost/engine_behavior.h"
#include "cost/memory.h"
#include "cost/op_profile.h"
#include "engine/model/model_config.h"

namespace tokenline {
namespace {

constexpr double kGb = 1e9;

CostModel pool_cost_model(const Candidate& c, const Parallel& p, const PlanPricing& pricing) {
  CostOptions options;
  options.max_chunk_tokens = c.chunk_tokens;  // as `tokenline sim --chunk` sizes the activation reserve
  options.profile = pricing.profile;
  const KvLayout layout =
      run_kv_layout(profile_engine(pricing.profile.get()), pricing.model, "", pricing.hardware);
  return make_cost_model(pricing.model, p, layout, pricing.hardware, options);
}

// The engine a probe of candidate c simulates (`tokenline sim --profile P --chunk C --max-running M`).
EngineBehavior candidate_engine(const Candidate& c, const PlanPricing& pricing) {
  const EngineBehavior* profiled = profile_engine(pricing.profile.get());
  EngineBehavior b = profiled != nullptr ? *profiled : seed_behavior();
  b.chunked_prefill_size = c.chunk_tokens;
  b.max_running_requests = c.max_running;
  return b;
}

std::string phrase(const char* format, double a, double b) {
  char text[160];
  std::snprintf(text, sizeof text, format, a, b);
  return text;
}

// Weights and KV of one pool; `tokens` is the most KV one request holds there.
PruneReason capacity_reason(const CostModel& cm, const EngineBehavior& engine, int64_t tokens,
                            std::string& detail) {
  const KvCapacity cap = kv_capacity(cm, engine, cm.model.max_context_tokens);
  if (!cap.weights_fit) {
    detail = cm.parallel.name() + ": " +
             phrase("%.1f GB of weights per GPU, %.1f GB usable", cap.weight_bytes / kGb,
                    cap.usable_hbm_bytes / kGb);
    return PruneReason::kWeights;
  }
  if (cap.tokens_per_rank < tokens) {
    detail = cm.parallel.name() + ": " +
             phrase("KV for %.0f tokens per rank, the longest request holds %.0f",
                    static_cast<double>(cap.tokens_per_rank), static_cast<double>(tokens));
    return PruneReason::kKv;
  }
  return PruneReason::kNone;
}

double prefill_floor_s(const CostModel& cm, int64_t tokens, int64_t chunk_tokens) {
  double total_s = 0;
  for (const ChunkCost& chunk : prefill_chunks(cm, tokens, chunk_tokens)) total_s += chunk.cost.total_s;
  return total_s;
}

double decode_floor_s(const CostModel& cm, int64_t context_tokens) {
  const SeqWork one{.new_tokens = 1, .context_tokens = context_tokens, .prefill = false, .last_chunk = false};
  return step_cost(cm, std::span<const SeqWork>(&one, 1)).total_s;
}

}  // namespace

std::string prune_reason_name(PruneReason r) {
  switch (r) {
    case PruneReason::kNone:
      return "";
    case PruneReason::kWeights:
      return "weights";
    case PruneReason::kKv:
      return "kv";
    case PruneReason::kTtftFloor:
      return "ttft-floor";
    case PruneReason::kTpotFloor:
      return "tpot-floor";
  }
  return "";
}

LedgerVerdict ledger_verdict(const Candidate& c, const PlanPricing& pricing, const WorkloadProfile& workload,
                             const Slo& slo) {
  LedgerVerdict v;
  const CostModel decode = pool_cost_model(c, c.layout, pricing);
  const CostModel prefill = c.pd ? pool_cost_model(c, c.prefill, pricing) : decode;
  const EngineBehavior engine = candidate_engine(c, pricing);
  if (c.pd) v.reason = capacity_reason(prefill, engine, workload.max_prompt_tokens, v.detail);
  if (v.reason == PruneReason::kNone)
    v.reason = capacity_reason(decode, engine, workload.max_request_tokens, v.detail);
  if (v.reason != PruneReason::kNone) return v;
  v.ttft_floor_s = prefill_floor_s(prefill, workload.p90_uncached_tokens, c.chunk_tokens);
  v.tpot_floor_s = decode_floor_s(decode, workload.p90_prompt_tokens);
  if (slo.ttft_s > 0 && v.ttft_floor_s > slo.ttft_s) {
    v.reason = PruneReason::kTtftFloor;
    v.detail = phrase("TTFT floor %.1f ms > SLO %.1f ms", v.ttft_floor_s * 1e3, slo.ttft_s * 1e3);
  } else if (slo.tpot_s > 0 && v.tpot_floor_s > slo.tpot_s) {
    v.reason = PruneReason::kTpotFloor;
    v.detail = phrase("TPOT floor %.2f ms > SLO %.2f ms", v.tpot_floor_s * 1e3, slo.tpot_s * 1e3);
  }
  return v;
}

}  // namespace tokenline
