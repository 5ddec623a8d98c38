// Ranking plan rows (plan/plan_row.h): by throughput per GPU, or by dollars per million output tokens at each
// row's GPU price, so that prices decide between hardware.
#include "plan/plan_row.h"

#include <catch2/catch.hpp>

namespace tokenline {
namespace {

// A row that meets the SLO on `gpus` GPUs of `hardware` at `output_tokens_per_s`, priced at `usd`.
PlanRow meeting(int32_t id, const std::string& hardware, int32_t gpus, double output_tokens_per_s,
                double usd) {
  PlanRow r;
  r.candidate.id = id;
  r.candidate.layout = parse_parallel("tp" + std::to_string(gpus), "test");
  r.status = RowStatus::kMeets;
  r.hardware = hardware;
  r.usd_per_gpu_hour = usd;
  r.at.output_tokens_per_s = output_tokens_per_s;
  r.at.tpot_mean_ms = 20;
  return r;
}

TEST_CASE("cost per million output tokens is GPUs x price over the output an hour", "[plan]") {
  const PlanRow r = meeting(0, "h200", 2, 1000, 4.54);
  CHECK(r.usd_per_million_output_tokens() == Approx(2 * 4.54 / (1000 * 3600.0) * 1e6));
  CHECK(r.deployment() == "h200: 1x tp2");
  CHECK(meeting(1, "", 2, 1000, 0).usd_per_million_output_tokens() == 0);
}

TEST_CASE("ranking by cost follows the prices while ranking by throughput does not", "[plan]") {
  // B200 serves 1.5x the H200's output per GPU.
  std::vector<PlanRow> rows = {meeting(0, "h200", 2, 2000, 4.54), meeting(1, "b200", 2, 3000, 6.03)};
  rank_rows(rows, RankBy::kThroughput);
  CHECK(rows.front().hardware == "b200");
  rank_rows(rows, RankBy::kCost);  // 4.54 / 2000 > 6.03 / 3000: the B200 is cheaper per token
  CHECK(rows.front().hardware == "b200");
  rows[0].usd_per_gpu_hour = rows[0].hardware == "b200" ? 7.5 : 4.54;  // the B200 dearer than 1.5x
  rows[1].usd_per_gpu_hour = rows[1].hardware == "b200" ? 7.5 : 4.54;
  rank_rows(rows, RankBy::kCost);
  CHECK(rows.front().hardware == "h200");
  rank_rows(rows, RankBy::kThroughput);  // the price changes nothing here
  CHECK(rows.front().hardware == "b200");
}

TEST_CASE("under cost ranking a row without a price sorts after the priced ones, misses stay after meets",
          "[plan]") {
  std::vector<PlanRow> rows = {meeting(0, "a", 2, 9000, 0), meeting(1, "b", 2, 1000, 3)};
  PlanRow miss = meeting(2, "c", 2, 99000, 1);
  miss.status = RowStatus::kMisses;
  rows.push_back(miss);
  rank_rows(rows, RankBy::kCost);
  CHECK(rows[0].candidate.id == 1);
  CHECK(rows[1].candidate.id == 0);
  CHECK(rows[2].candidate.id == 2);
}

}  // namespace
}  // namespace tokenline
