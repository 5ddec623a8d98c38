#include "plan/ledger_prune.h"

#include <catch2/catch.hpp>

#include "cost/op_profile.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

Candidate colocated(const std::string& layout, int32_t instances) {
  Candidate c;
  c.layout = parse_parallel(layout, "test");
  c.instances = instances;
  c.chunk_tokens = 8192;
  c.max_running = 64;
  return c;
}

WorkloadProfile profile(int64_t prompt, int64_t uncached, int64_t longest) {
  WorkloadProfile w;
  w.requests = 10;
  w.p90_prompt_tokens = prompt;
  w.p90_uncached_tokens = uncached;
  w.max_prompt_tokens = longest;
  w.max_request_tokens = longest;
  return w;
}

PlanPricing roofline(const std::string& model) {
  return PlanPricing{.model = load_model(model), .hardware = load_hardware("h200"), .profile = nullptr};
}

TEST_CASE("the ledger prunes layouts whose GPUs cannot hold the weights", "[plan]") {
  const PlanPricing glm = roofline("glm-5.3");
  const LedgerVerdict v = ledger_verdict(colocated("tp2", 4), glm, profile(1000, 1000, 2000), Slo{});
  CHECK(v.reason == PruneReason::kWeights);
  CHECK(prune_reason_name(v.reason) == "weights");
  CHECK(v.detail.find("GB of weights per GPU") != std::string::npos);
  CHECK(ledger_verdict(colocated("dp8-ep8", 1), glm, profile(1000, 1000, 2000), Slo{}).reason ==
        PruneReason::kNone);
}

TEST_CASE("the ledger prunes layouts without KV for the longest request", "[plan]") {
  const PlanPricing llama = roofline("llama-3.1-70b");
  const int64_t ten_million = 10'000'000;  // far beyond any 8-GPU KV pool of a 70B model
  const LedgerVerdict v = ledger_verdict(colocated("tp8", 1), llama, profile(1000, 1000, ten_million), Slo{});
  CHECK(v.reason == PruneReason::kKv);
}

TEST_CASE("static latency floors that already miss the SLO prune the candidate", "[plan]") {
  const PlanPricing glm = roofline("glm-5.3");
  const Candidate c = colocated("dp8-ep8", 2);
  const LedgerVerdict free = ledger_verdict(c, glm, profile(8000, 8000, 9000), Slo{});
  REQUIRE(free.reason == PruneReason::kNone);
  REQUIRE(free.ttft_floor_s > 0);
  REQUIRE(free.tpot_floor_s > 0);
  const Slo tight_ttft{.ttft_s = free.ttft_floor_s * 0.5, .tpot_s = 0};
  CHECK(ledger_verdict(c, glm, profile(8000, 8000, 9000), tight_ttft).reason == PruneReason::kTtftFloor);
  const Slo tight_tpot{.ttft_s = 0, .tpot_s = free.tpot_floor_s * 0.5};
  CHECK(ledger_verdict(c, glm, profile(8000, 8000, 9000), tight_tpot).reason == PruneReason::kTpotFloor);
  // fewer uncached tokens (prefix-cache hits) lower the TTFT floor
  CHECK(ledger_verdict(c, glm, profile(8000, 500, 9000), Slo{}).ttft_floor_s < free.ttft_floor_s);
}

// With --profile every probe runs the profile's engine (SGLang: MLA latent KV on every
// TP rank, its static memory fraction), so the ledger must size KV as that engine does, not as the seed.
TEST_CASE("with an op profile the ledger sizes KV as the profile's engine does", "[plan]") {
  const PlanPricing seed = roofline("glm-5.3");
  PlanPricing sglang = seed;
  sglang.profile = load_op_profile("h200-sglang");
  const Candidate tp8 = colocated("tp8", 1);
  const int64_t one_million = 1'000'000;  // GLM-5.3's longest context
  // the seed shards the latent KV over the 8 GPUs: a 1M-token request fits one tp8 instance
  const LedgerVerdict sharded = ledger_verdict(tp8, seed, profile(1000, 1000, one_million), Slo{});
  CHECK(sharded.reason == PruneReason::kNone);
  // SGLang keeps all of it on every GPU: an eighth of the tokens, fewer than the request holds
  const LedgerVerdict replicated = ledger_verdict(tp8, sglang, profile(1000, 1000, one_million), Slo{});
  CHECK(replicated.reason == PruneReason::kKv);
  CHECK(replicated.detail.find("tp8: KV for") != std::string::npos);
  // a request that SGLang's replicated pool holds is not pruned
  CHECK(ledger_verdict(tp8, sglang, profile(1000, 1000, 100'000), Slo{}).reason == PruneReason::kNone);
}

TEST_CASE("with an op profile the ledger's latency floors are the profile's", "[plan]") {
  const PlanPricing seed = roofline("deepseek-v3");
  PlanPricing sglang = seed;
  sglang.profile = load_op_profile("h200-sglang");
  const Candidate c = colocated("tp8", 1);
  const LedgerVerdict roof = ledger_verdict(c, seed, profile(4096, 4096, 8192), Slo{});
  const LedgerVerdict measured = ledger_verdict(c, sglang, profile(4096, 4096, 8192), Slo{});
  REQUIRE(roof.reason == PruneReason::kNone);
  REQUIRE(measured.reason == PruneReason::kNone);
  // measured small-batch kernels and the per-layer step floor: a one-request decode step is slower than
  // its roofline (DeepSeek tp8: ~10 ms measured per token at 4 clients, the roofline a few ms)
  CHECK(measured.tpot_floor_s > 1.5 * roof.tpot_floor_s);
  CHECK(measured.ttft_floor_s != roof.ttft_floor_s);
}

}  // namespace
}  // namespace tokenline
