// Evaluating a plan's candidates: the ledger verdict of each (no simulation), then the rate search of every
// survivor, run as `tokenline sim` child processes (SimGrid allows one simulation per process) through the
// process pool, round by round: round r runs the r-th probe of every candidate still searching.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/ledger_prune.h"
#include "plan/plan_row.h"
#include "plan/plan_setup.h"

namespace tokenline {

// One row per candidate with its ledger verdict: pruned rows are final, the others wait for simulation.
std::vector<PlanRow> ledger_rows(const std::vector<Candidate>& candidates, const PlanPricing& pricing,
                                 const PlanSetup& setup);

struct RunnerOptions {
  std::string binary;       // the tokenline executable the probes run
  std::string scratch_dir;  // probe outputs, removed once read (a failed probe's log stays)
  int32_t jobs = 1;         // child processes at once
  bool progress = false;    // a progress line on stderr, rewritten after each round
};

struct RunnerStats {
  int64_t simulations = 0;
  int64_t failed = 0;  // probes whose child exited non-zero
  // The first failed probe (in round order): its candidate's deployment, exit code and the last line of its
  // log (the child's message), and the log's path (kept); empty when none failed.
  std::string first_failure;
  int32_t first_failure_exit = 0;
  // Every probe failed: the plan has no measurement at all, and its ranking would be of nothing.
  bool all_failed() const { return simulations > 0 && failed == simulations; }
};

// Runs the rate search of every row that is not pruned and fills its outcome.
RunnerStats simulate_rows(const PlanSetup& setup, std::vector<PlanRow>& rows, const RunnerOptions& options);

}  // namespace tokenline
