#include "plan/plan_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibrate/process_pool.h"
#include "engine/model/model_config.h"
#include "plan/rate_search.h"
#include "plan/sim_invocation.h"

namespace tokenline {
namespace {

constexpr double kNoFloorRatio = 1e9;  // weights or KV do not fit: farther than any latency

double floor_ratio(const LedgerVerdict& v, const Slo& slo) {
  if (v.reason == PruneReason::kWeights || v.reason == PruneReason::kKv) return kNoFloorRatio;
  double ratio = 0;
  if (slo.ttft_s > 0) ratio = std::max(ratio, v.ttft_floor_s / slo.ttft_s);
  if (slo.tpot_s > 0) ratio = std::max(ratio, v.tpot_floor_s / slo.tpot_s);
  return ratio;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ProbeResult read_probe(const std::string& dir, int exit_code) {
  ProbeResult p;
  p.exit_code = exit_code;
  if (exit_code != 0) return p;
  try {
    return parse_probe_metrics(read_text(std::filesystem::path(dir) / "metrics.json"), exit_code);
  } catch (const std::exception&) {
    p.exit_code = -1;  // exited 0 without readable metrics
    return p;
  }
}

// Folds one probe into its row: the first (lowest-rate) probe always; a later one only when it met.
void record_probe(const PlanSetup& setup, PlanRow& row, const ProbeResult& probe,
                  const std::string& time_scale) {
  const bool meets = meets_slo(probe, setup.slo);
  const bool first = row.probes == 0;
  ++row.probes;
  if (!first && !meets) return;
  if (first) row.status = meets ? RowStatus::kMeets : RowStatus::kMisses;
  row.at = probe;
  row.time_scale = time_scale;
  row.rate_per_s = setup.workload.rate_per_s / std::stod(time_scale);
  row.slo_ratio = slo_ratio(probe, setup.slo);
  const std::string out = "runs/c" + std::to_string(row.candidate.id);
  row.sim_command = sim_command_line(sim_arguments(setup.target, row.candidate, time_scale, out));
}

void print_progress(const std::vector<PlanRow>& rows, const std::vector<RateSearch>& searches, int64_t sims,
                    double elapsed_s) {
  int64_t done = 0, left = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].status == RowStatus::kPruned || searches[i].done()) {
      ++done;
    } else {
      left += searches[i].probe_budget() - searches[i].probes_run();  // at most: a search may stop early
    }
  }
  const double eta_s = sims > 0 ? elapsed_s / static_cast<double>(sims) * static_cast<double>(left) : 0.0;
  std::fprintf(stderr,
               "\rtokenline plan: %lld/%zu candidates done, %lld simulations, %.0f s, ETA <= %.0f s   ",
               static_cast<long long>(done), rows.size(), static_cast<long long>(sims), elapsed_s, eta_s);
}

}  // namespace

std::vector<PlanRow> ledger_rows(const std::vector<Candidate>& candidates, const PlanPricing& pricing,
                                 const PlanSetup& setup) {
  std::vector<PlanRow> rows;
  for (const Candidate& c : candidates) {
    PlanRow r;
    r.candidate = c;
    r.verdict = ledger_verdict(c, pricing, setup.workload, setup.slo);
    r.status = r.verdict.reason == PruneReason::kNone ? RowStatus::kMisses : RowStatus::kPruned;
    r.slo_ratio = floor_ratio(r.verdict, setup.slo);
    rows.push_back(r);
  }
  return rows;
}

RunnerStats simulate_rows(const PlanSetup& setup, std::vector<PlanRow>& rows, const RunnerOptions& options) {
  RunnerStats stats;
  std::vector<RateSearch> searches(rows.size(), RateSearch(setup.search));
  std::filesystem::create_directories(options.scratch_dir);
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    std::vector<size_t> round;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].status != RowStatus::kPruned && !searches[i].done()) round.push_back(i);
    }
    if (round.empty()) break;
    std::vector<ProcessJob> jobs;
    std::vector<std::string> scales, dirs;
    for (size_t i : round) {
      scales.push_back(time_scale_text(searches[i].next_log2()));
      dirs.push_back(options.scratch_dir + "/c" + std::to_string(rows[i].candidate.id) + "-p" +
                     std::to_string(searches[i].probes_run()));
      std::vector<std::string> argv = {options.binary};
      for (std::string& a : sim_arguments(setup.target, rows[i].candidate, scales.back(), dirs.back()))
        argv.push_back(std::move(a));
      jobs.push_back({argv, dirs.back() + ".log"});
    }
    const std::vector<int> codes = run_processes(jobs, options.jobs);
    for (size_t k = 0; k < round.size(); ++k) {
      const ProbeResult probe = read_probe(dirs[k], codes[k]);
      searches[round[k]].record(meets_slo(probe, setup.slo));
      record_probe(setup, rows[round[k]], probe, scales[k]);
      if (searches[round[k]].done()) rows[round[k]].rate_capped = searches[round[k]].capped();
      ++stats.simulations;
      std::filesystem::remove_all(dirs[k]);
      if (probe.exit_code == 0) std::filesystem::remove(dirs[k] + ".log");
      if (probe.exit_code != 0 && stats.failed++ == 0) {
        stats.first_failure = rows[round[k]].candidate.deployment() + ": exit " +
                              std::to_string(probe.exit_code) + ": " +
                              log_reason(read_text(dirs[k] + ".log")) + " (log: " + dirs[k] + ".log)";
        stats.first_failure_exit = probe.exit_code;
      }
    }
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.progress) print_progress(rows, searches, stats.simulations, elapsed_s);
  }
  if (options.progress) std::fprintf(stderr, "\n");
  std::error_code ignored;
  std::filesystem::remove(options.scratch_dir, ignored);  // only when empty: failed logs stay
  return stats;
}

}  // namespace tokenline
