// The JSON forms of a plan: partial results (one shard's rows, `--shard k/N`) and plan.json (every row,
// ranked). Rows read back from a partial are exactly the rows that were written (doubles round-trip).
#pragma once

#include <string>
#include <vector>

#include "plan/plan_row.h"
#include "plan/plan_setup.h"

namespace tokenline {

struct PlanPartial {
  PlanSetup setup;
  std::string setup_text;  // canonical JSON of the setup: partials of one plan have equal texts
  int32_t shard = 1;       // k of k/N
  int32_t shards = 1;      // N
  std::vector<PlanRow> rows;
};

std::string partial_json(const PlanSetup& setup, int32_t shard, int32_t shards,
                         const std::vector<PlanRow>& rows);
// Throws InputError naming `where` when the text is not a tokenline plan partial.
PlanPartial parse_partial(const std::string& text, const std::string& where);

// plan.json: the setup, counts by status and prune reason, the best row's serving-engine commands, and
// every row in rank order.
std::string plan_json(const PlanSetup& setup, const std::vector<PlanRow>& ranked,
                      const std::vector<std::string>& best_launch);

}  // namespace tokenline
