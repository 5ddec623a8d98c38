// The outputs of a plan: plan.csv and plan.json (every row, ranked), pareto.svg, and the text for stdout
// (the ranked table, the best row's `tokenline sim` and SGLang commands, or "no configuration meets ..."
// with the closest candidates). Depends only on the setup and the rows, in any order: an unsharded run
// and a merge of its shards write the same bytes.
#pragma once

#include <string>
#include <vector>

#include "plan/plan_row.h"
#include "plan/plan_setup.h"

namespace tokenline {

std::string plan_csv(const std::vector<PlanRow>& ranked);
std::string slo_phrase(const Slo& slo);  // "p90 TTFT <= 2000 ms and p90 TPOT <= 50 ms"

// Writes the three files into `dir` (created); returns the stdout report. Throws std::runtime_error
// when a file cannot be written.
std::string write_plan_outputs(const PlanSetup& setup, std::vector<PlanRow> rows, const std::string& dir);

}  // namespace tokenline
