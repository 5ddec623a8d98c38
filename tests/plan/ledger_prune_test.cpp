#include "plan/ledger_prune.h"

#include <catch2/catch.hpp>

#include "engine/model/model_config.h"
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

TEST_CASE("the ledger prunes layouts whose GPUs cannot hold the weights", "[plan]") {
  const ModelConfig glm = load_model("glm-5.3");
  const Hardware h200 = load_hardware("h200");
  const LedgerVerdict v = ledger_verdict(colocated("tp2", 4), glm, h200, profile(1000, 1000, 2000), Slo{});
  CHECK(v.reason == PruneReason::kWeights);
  CHECK(prune_reason_name(v.reason) == "weights");
  CHECK(v.detail.find("GB of weights per GPU") != std::string::npos);
  CHECK(ledger_verdict(colocated("dp8-ep8", 1), glm, h200, profile(1000, 1000, 2000), Slo{}).reason ==
        PruneReason::kNone);
}

TEST_CASE("the ledger prunes layouts without KV for the longest request", "[plan]") {
  const ModelConfig llama = load_model("llama-3.1-70b");
  const Hardware h200 = load_hardware("h200");
  const int64_t ten_million = 10'000'000;  // far beyond any 8-GPU KV pool of a 70B model
  const LedgerVerdict v =
      ledger_verdict(colocated("tp8", 1), llama, h200, profile(1000, 1000, ten_million), Slo{});
  CHECK(v.reason == PruneReason::kKv);
}

TEST_CASE("static latency floors that already miss the SLO prune the candidate", "[plan]") {
  const ModelConfig glm = load_model("glm-5.3");
  const Hardware h200 = load_hardware("h200");
  const Candidate c = colocated("dp8-ep8", 2);
  const LedgerVerdict free = ledger_verdict(c, glm, h200, profile(8000, 8000, 9000), Slo{});
  REQUIRE(free.reason == PruneReason::kNone);
  REQUIRE(free.ttft_floor_s > 0);
  REQUIRE(free.tpot_floor_s > 0);
  const Slo tight_ttft{.ttft_s = free.ttft_floor_s * 0.5, .tpot_s = 0};
  CHECK(ledger_verdict(c, glm, h200, profile(8000, 8000, 9000), tight_ttft).reason ==
        PruneReason::kTtftFloor);
  const Slo tight_tpot{.ttft_s = 0, .tpot_s = free.tpot_floor_s * 0.5};
  CHECK(ledger_verdict(c, glm, h200, profile(8000, 8000, 9000), tight_tpot).reason ==
        PruneReason::kTpotFloor);
  // fewer uncached tokens (prefix-cache hits) lower the TTFT floor
  CHECK(ledger_verdict(c, glm, h200, profile(8000, 500, 9000), Slo{}).ttft_floor_s < free.ttft_floor_s);
}

}  // namespace
}  // namespace tokenline
