#include "cost/moe_load.h"

#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "cost/step_cost.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {

CostModel glm(const char* parallel) {
  return make_cost_model(model_preset("glm-5.3"), parse_parallel(parallel, "test"), KvLayout::kFp8DsMla,
                         load_hardware("h200"));
}

constexpr uint64_t kSeed = 7;
constexpr int32_t kExperts = 256;  // GLM-5.3 routed experts
constexpr int32_t kEp = 8;
constexpr int32_t kLayers = 75;  // GLM-5.3 MoE layers (78 - 3 dense)

ExpertLoadModel zipf(double alpha, bool eplb = false, int32_t redundant = 0) {
  MoeLoadOptions o;
  o.skew = ExpertSkew::kZipf;
  o.zipf_alpha = alpha;
  o.eplb = eplb;
  o.redundant_experts = redundant;
  return ExpertLoadModel(kExperts, kEp, kLayers, o, kSeed);
}

// A dp8-ep8 decode step: 32 requests per rank at 32K context, with the given expert imbalance.
double decode_step_s(const CostModel& cm, double imbalance) {
  const std::vector<SeqWork> seqs(32, SeqWork{1, 32768, false, false});
  std::vector<std::span<const SeqWork>> ranks(8, seqs);
  return step_cost(cm, ranks, imbalance).total_s;
}

}  // namespace

TEST_CASE("Rank shares sum to one and uniform routing is balanced", "[moe_load]") {
  const ExpertLoadModel uniform(kExperts, kEp, kLayers, MoeLoadOptions{}, kSeed);
  for (int32_t l = 0; l < kLayers; ++l) {
    const auto& s = uniform.rank_shares(l);
    CHECK(std::accumulate(s.begin(), s.end(), 0.0) == Approx(1.0));
  }
  CHECK(uniform.expected_imbalance() == Approx(1.0));
  // Sampling noise only: a big prefill step is within a few percent of even, a tiny decode step is not.
  Rng rng(kSeed, "expert_load");
  const double big = uniform.draw_imbalance(32768.0 * 8, rng);
  CHECK(big >= 1.0);
  CHECK(big < 1.05);
}

TEST_CASE("Imbalance and step time rise monotonically with Zipf skew", "[moe_load]") {
  const CostModel cm = glm("dp8-ep8");
  const double alphas[] = {0.0, 0.4, 0.8, 1.2, 1.6, 2.0};
  double last_imbalance = 0, last_step_s = 0;
  for (double alpha : alphas) {
    const double imbalance = zipf(alpha).expected_imbalance();
    const double step_s = decode_step_s(cm, imbalance);
    INFO("alpha " << alpha << " imbalance " << imbalance << " step " << step_s);
    CHECK(imbalance >= last_imbalance);
    CHECK(step_s >= last_step_s);
    last_imbalance = imbalance;
    last_step_s = step_s;
  }
  // alpha 2: the hottest expert alone takes 1/zeta(2) ~ 61% of the pairs, so one rank holds > 60%.
  CHECK(last_imbalance > 0.6 * kEp);
  // Decode reads weights (skew barely changes that); the busiest rank's GEMM and dispatch still grow.
  CHECK(last_step_s > decode_step_s(cm, 1.0));
  // A prefill chunk is compute-bound in the experts: skew shows directly.
  const SeqWork chunk{16384, 0, true, false};
  const std::span<const SeqWork> one[1] = {std::span<const SeqWork>(&chunk, 1)};
  CHECK(step_cost(cm, one, last_imbalance).total_s > 1.5 * step_cost(cm, one, 1.0).total_s);
}

TEST_CASE("The imbalance scales the busiest rank's expert GEMM and dispatch bytes", "[moe_load]") {
  const CostModel cm = glm("dp8-ep8");
  const std::vector<SeqWork> seqs(32, SeqWork{1, 32768, false, false});
  std::vector<std::span<const SeqWork>> ranks(8, seqs);
  const StepCost even = step_cost(cm, ranks);
  const StepCost skewed = step_cost(cm, ranks, 2.0);
  CHECK(skewed[Op::kExpertGemm].rank_flops == Approx(2 * even[Op::kExpertGemm].rank_flops));
  CHECK(skewed[Op::kDispatch].bytes_each == Approx(2 * even[Op::kDispatch].bytes_each));
  CHECK(skewed[Op::kCombine].bytes_each == Approx(2 * even[Op::kCombine].bytes_each));
  CHECK(skewed[Op::kExpertGemm].flops == Approx(even[Op::kExpertGemm].flops));  // same work instance-wide
  CHECK(step_cost(cm, ranks, 1.0).total_s == even.total_s);
}

TEST_CASE("EPLB lowers the imbalance and the step time and redundant experts lower it further",
          "[moe_load]") {
  const CostModel cm = glm("dp8-ep8");
  for (double alpha : {0.8, 1.2}) {
    const double none = zipf(alpha).expected_imbalance();
    const double placed = zipf(alpha, true, 0).expected_imbalance();
    const double redundant = zipf(alpha, true, 32).expected_imbalance();
    INFO("alpha " << alpha << ": " << none << " / " << placed << " / " << redundant);
    CHECK(placed < none);
    CHECK(redundant < placed);
    CHECK(redundant >= 1.0);
    CHECK(decode_step_s(cm, redundant) < decode_step_s(cm, none));
  }
}

TEST_CASE("EPLB with one spare slot per rank splits the hottest expert", "[moe_load]") {
  // 8 experts on 2 ranks of 4 slots, loads 3,1,...,1 (sum 10). Largest first without copies:
  //   r0: 3 | r1: 1,1,1 | tie -> r0: 1 | r1: 1 (full) | r0: 1,1  => r0 holds 6/10.
  // With 2 spare slots both go to the hot expert (3/1 > 1, then 3/2 > 1): ten copies of load 1, 5 + 5.
  std::vector<double> load = {3, 1, 1, 1, 1, 1, 1, 1};
  const std::vector<double> base = eplb_rank_shares(load, 2, 0);
  const std::vector<double> split = eplb_rank_shares(load, 2, 2);
  CHECK(std::max(base[0], base[1]) == Approx(0.6));
  CHECK(std::max(split[0], split[1]) == Approx(0.5));
}

TEST_CASE("Per-step draws replay bit for bit from the same seed", "[moe_load]") {
  const ExpertLoadModel m = zipf(1.0);
  Rng a(kSeed, "expert_load"), b(kSeed, "expert_load");
  for (double pairs : {8.0, 256.0, 262144.0}) {
    const double x = m.draw_imbalance(pairs, a);
    CHECK(x == m.draw_imbalance(pairs, b));
    CHECK(x >= 1.0);
  }
  Rng c(kSeed, "expert_load");
  CHECK(m.draw_imbalance(0, c) == 1.0);
}

TEST_CASE("A recorded histogram keeps its placement", "[moe_load]") {
  MoeLoadOptions o;
  o.skew = ExpertSkew::kHistogram;
  std::vector<double> row(kExperts, 1.0);
  row[0] = 1 + 31;  // expert 0 (rank 0) takes 32 / 287 of the pairs
  o.histogram = {row, std::vector<double>(kExperts, 1.0)};
  const ExpertLoadModel m(kExperts, kEp, kLayers, o, kSeed);
  CHECK(m.rank_shares(0)[0] == Approx(63.0 / 287.0));
  CHECK(m.expected_imbalance() == Approx((63.0 / 287.0 * kEp + 1.0) / 2));
}
