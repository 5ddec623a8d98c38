// PlanRow: one candidate's outcome (pruned by the ledger, simulated and missing the SLO at every rate
// probed, or meeting it up to a rate), its figures of merit, and its JSON form, which partial results
// and plan.json share so that `tokenline plan merge` rebuilds exactly what one unsharded run writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/candidate_space.h"
#include "plan/ledger_prune.h"
#include "plan/probe_result.h"

namespace tokenline {

enum class RowStatus { kMeets, kMisses, kPruned };
// How meeting rows are ranked: output tokens/s per GPU (the default), or dollars per million output tokens
// at each row's GPU price (plan --rank cost: across hardware with different prices, docs/cost.md).
enum class RankBy { kThroughput, kCost };
std::string row_status_name(RowStatus s);  // "meets", "misses", "pruned"

struct PlanRow {
  Candidate candidate;
  RowStatus status = RowStatus::kPruned;
  LedgerVerdict verdict;
  int32_t probes = 0;
  std::string time_scale;    // of the reported probe ("" when pruned)
  double rate_per_s = 0;     // arrival rate of the reported probe
  bool rate_capped = false;  // meets at every rate probed up to the search's widest top: rate_per_s is ">="
  ProbeResult at;            // meets: the highest rate that met; misses: the lowest rate probed
  std::string sim_command;   // reproduces the reported probe ("" when pruned)
  double slo_ratio = 0;      // meets/misses: the reported probe's; pruned: the floors' ratio to the SLO
  std::string hardware;      // a plan over several --hardware: the row's ("": the plan's one)
  double usd_per_gpu_hour = 0;  // the row's GPU price (0: none given)

  double throughput_per_gpu() const;  // output tokens/s per GPU at the reported probe
  double tokens_per_user() const;     // 1000 / mean TPOT (ms): one user's decode speed, tokens/s
  // GPUs x price per hour over the output tokens an hour at the reported probe, per million; 0 without a
  // price or an output.
  double usd_per_million_output_tokens() const;
  std::string deployment() const;  // the candidate's, after its hardware when the row names one
};

// The ranking: meets by throughput per GPU (desc) - or with RankBy::kCost by dollars per million output
// tokens (asc) - then tokens/s per user (desc); then misses by SLO ratio; then pruned by floor ratio; ties
// by candidate id.
void rank_rows(std::vector<PlanRow>& rows, RankBy by = RankBy::kThroughput);

}  // namespace tokenline
