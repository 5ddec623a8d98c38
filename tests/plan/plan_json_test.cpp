#include "plan/plan_json.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "plan/sim_invocation.h"

namespace tokenline {
namespace {

PlanRow simulated_row() {
  PlanRow r;
  r.candidate.id = 7;
  r.candidate.pd = true;
  r.candidate.prefill = parse_parallel("tp8", "test");
  r.candidate.prefill_instances = 1;
  r.candidate.layout = parse_parallel("dp8-ep8", "test");
  r.candidate.instances = 1;
  r.candidate.chunk_tokens = 8192;
  r.candidate.max_running = 64;
  r.status = RowStatus::kMeets;
  r.verdict.ttft_floor_s = 0.123456789012345;
  r.verdict.tpot_floor_s = 0.01 / 3;
  r.probes = 6;
  r.time_scale = "0.840896";
  r.rate_per_s = 2.2119478 / 0.840896;
  r.at.exit_code = 0;
  r.at.completed = 200;
  r.at.ttft_p90_ms = 1999.999999999;
  r.at.tpot_mean_ms = 33.3;
  r.at.output_tokens_per_s = 12345.678;
  r.slo_ratio = 0.1 + 0.2;
  r.sim_command = "tokenline sim --slo ttft=2s,tpot=50ms --out runs/c7";
  return r;
}

TEST_CASE("a partial round-trips: rows read back write the same bytes", "[plan]") {
  PlanSetup setup;
  setup.target.model = "glm-5.3";
  setup.target.slo = "ttft=2s,tpot=50ms";
  setup.target.profile = "h200-sglang";
  setup.target.profile_set = "step_floor_per_layer_s=0.0002";
  setup.slo = Slo{.ttft_s = 2, .tpot_s = 0.05};
  setup.candidates = 20;
  PlanRow pruned;
  pruned.candidate.id = 3;
  pruned.candidate.layout = parse_parallel("tp2", "test");
  pruned.verdict.reason = PruneReason::kWeights;
  pruned.verdict.detail = "tp2: 380.0 GB of weights per GPU, 126.9 GB usable";
  pruned.slo_ratio = 1e9;
  const std::string text = partial_json(setup, 2, 3, {pruned, simulated_row()});
  const PlanPartial back = parse_partial(text, "p.json");
  CHECK(back.shard == 2);
  CHECK(back.shards == 3);
  REQUIRE(back.rows.size() == 2);
  CHECK(back.rows[1].candidate.deployment() == "1P tp8 + 1D dp8-ep8");
  CHECK(back.rows[0].verdict.reason == PruneReason::kWeights);
  CHECK(back.setup.target.profile == "h200-sglang");
  CHECK(back.setup.target.profile_set == "step_floor_per_layer_s=0.0002");
  CHECK(partial_json(back.setup, back.shard, back.shards, back.rows) == text);
}

TEST_CASE("a partial written before plan --profile reads as priced without a profile", "[plan]") {
  PlanSetup setup;
  setup.target.model = "glm-5.3";
  setup.candidates = 1;
  std::string text = partial_json(setup, 1, 1, {simulated_row()});
  for (const char* key : {"\"profile\": \"\",", "\"profile_set\": \"\","}) {
    const size_t at = text.find(key);
    REQUIRE(at != std::string::npos);
    text.erase(at, std::string(key).size());
  }
  REQUIRE(text.find("profile_set") == std::string::npos);
  const PlanPartial back = parse_partial(text, "old.json");
  CHECK(back.setup.target.profile.empty());
  CHECK(back.setup.target.profile_set.empty());
  CHECK(back.setup.launch_engine == LaunchEngine::kSglang);
}

TEST_CASE("a partial's launch engine reads back, and an unknown one is bad input", "[plan]") {
  PlanSetup setup;
  setup.target.model = "glm-5.3";
  setup.launch_engine = LaunchEngine::kVllm;
  setup.candidates = 1;
  std::string text = partial_json(setup, 1, 1, {simulated_row()});
  CHECK(parse_partial(text, "p.json").setup.launch_engine == LaunchEngine::kVllm);
  const std::string key = "\"launch_engine\": \"vllm\"";
  const size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  std::string trtllm = text;
  trtllm.replace(at, key.size(), "\"launch_engine\": \"trtllm\"");
  CHECK(parse_partial(trtllm, "p.json").setup.launch_engine == LaunchEngine::kTrtllm);
  text.replace(at, key.size(), "\"launch_engine\": \"tgi\"");
  CHECK_THROWS_AS(parse_partial(text, "p.json"), InputError);
}

TEST_CASE("plan --weights-format reaches every probe's sim and round-trips through a partial", "[plan]") {
  PlanSetup setup;
  setup.target.model = "minimax-m3";
  setup.target.weights_format = "mxfp8";
  setup.candidates = 1;
  const std::string text = partial_json(setup, 1, 1, {simulated_row()});
  CHECK(parse_partial(text, "p.json").setup.target.weights_format == "mxfp8");
  const std::vector<std::string> args = sim_arguments(setup.target, simulated_row().candidate, "1", "out");
  const auto at = std::find(args.begin(), args.end(), "--weights-format");
  REQUIRE(at != args.end());
  CHECK(*(at + 1) == "mxfp8");
  // Without it the key is not written (partials and plan.json of earlier releases read the same).
  setup.target.weights_format.clear();
  const std::string plain = partial_json(setup, 1, 1, {simulated_row()});
  CHECK(plain.find("weights_format") == std::string::npos);
  CHECK(parse_partial(plain, "p.json").setup.target.weights_format.empty());
}

TEST_CASE("a file that is not a plan partial is bad input", "[plan]") {
  CHECK_THROWS_AS(parse_partial("{\"format\": \"other\"}", "x.json"), InputError);
  CHECK_THROWS_AS(parse_partial("not json", "x.json"), InputError);
}

}  // namespace
}  // namespace tokenline
