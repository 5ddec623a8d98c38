#include "plan/plan_row.h"

#include <algorithm>
#include <tuple>

namespace tokenline {

std::string row_status_name(RowStatus s) {
  switch (s) {
    case RowStatus::kMeets:
      return "meets";
    case RowStatus::kMisses:
      return "misses";
    case RowStatus::kPruned:
      return "pruned";
  }
  return "";
}

double PlanRow::throughput_per_gpu() const {
  const int32_t gpus = candidate.gpus();
  return gpus > 0 ? at.output_tokens_per_s / gpus : 0.0;
}

double PlanRow::tokens_per_user() const {
  return at.tpot_mean_ms > 0 ? 1000.0 / at.tpot_mean_ms : 0.0;
}

void rank_rows(std::vector<PlanRow>& rows) {
  auto key = [](const PlanRow& r) {
    const bool meets = r.status == RowStatus::kMeets;
    return std::make_tuple(static_cast<int>(r.status), meets ? -r.throughput_per_gpu() : r.slo_ratio,
                           meets ? -r.tokens_per_user() : 0.0, r.candidate.id);
  };
  std::sort(rows.begin(), rows.end(), [&](const PlanRow& a, const PlanRow& b) { return key(a) < key(b); });
}

}  // namespace tokenline
