#include "plan/plan_row.h"

#include <algorithm>
#include <limits>
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

double PlanRow::usd_per_million_output_tokens() const {
  constexpr double kSecondsPerHour = 3600;
  constexpr double kMillion = 1e6;
  if (usd_per_gpu_hour <= 0 || at.output_tokens_per_s <= 0) return 0.0;
  return candidate.gpus() * usd_per_gpu_hour / (at.output_tokens_per_s * kSecondsPerHour) * kMillion;
}

std::string PlanRow::deployment() const {
  return hardware.empty() ? candidate.deployment() : hardware + ": " + candidate.deployment();
}

void rank_rows(std::vector<PlanRow>& rows, RankBy by) {
  auto merit = [by](const PlanRow& r) {
    switch (by) {
      case RankBy::kThroughput:
        return -r.throughput_per_gpu();
      case RankBy::kCost: {  // a row with no price or no output sorts after every priced one
        const double usd = r.usd_per_million_output_tokens();
        return usd > 0 ? usd : std::numeric_limits<double>::max();
      }
    }
    return 0.0;
  };
  auto key = [&merit](const PlanRow& r) {
    const bool meets = r.status == RowStatus::kMeets;
    return std::make_tuple(static_cast<int>(r.status), meets ? merit(r) : r.slo_ratio,
                           meets ? -r.tokens_per_user() : 0.0, r.candidate.id);
  };
  std::sort(rows.begin(), rows.end(), [&](const PlanRow& a, const PlanRow& b) { return key(a) < key(b); });
}

}  // namespace tokenline
