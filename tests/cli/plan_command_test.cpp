// `tokenline plan --engine E` on B200 (cli/plan_command.cpp): the candidates are priced by the profile
// b200-E, and the best ones come with E's launch lines.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline_both;
using testing::TestDir;

const std::string kSmallPlan =
    "plan --model llama-3.1-8b --hardware b200 --gpus 2 "
    "--workload synthetic:n=20,rate=2,input=uniform:256:2048,output=uniform:16:64,seed=1 "
    "--chunks 4096 --max-running-set 64 --probes 3 --jobs 2 --slo ttft=2s,tpot=50ms";

TEST_CASE("plan --hardware b200 --engine ranks deployments priced by b200-<engine> with its launch lines",
          "[plan_command]") {
  TestDir dir("plan_engine_b200");
  struct Case {
    const char* engine;
    const char* profile;
    const char* launch;  // what the engine's launch line starts with
  };
  for (const Case& c : {Case{"sglang", "b200-sglang", "python3 -m sglang.launch_server"},
                        Case{"trtllm", "b200-trtllm", "trtllm-serve"}}) {
    CAPTURE(c.engine);
    const std::string out = dir.file(c.engine);
    const auto r = run_tokenline_both(kSmallPlan + " --engine " + c.engine + " --out '" + out + "'", dir);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json plan = read_json(out + "/plan.json");
    CHECK(plan["setup"]["profile"] == c.profile);
    CHECK(plan["setup"]["launch_engine"] == c.engine);
    CHECK(plan["rows"].size() >= 2);
    CHECK(r.stdout_text.find(std::string("priced by profile ") + c.profile) != std::string::npos);
    CHECK(r.stdout_text.find(std::string("--profile ") + c.profile) != std::string::npos);  // the probes
    CHECK(r.stdout_text.find(c.launch) != std::string::npos);
    // how far to trust it, as sim says it: the profile's published runs (calibrate/accuracy.csv)
    CHECK(r.stdout_text.find(std::string("accuracy: ") + c.profile + " vs ") != std::string::npos);
  }
}

}  // namespace
}  // namespace tokenline
