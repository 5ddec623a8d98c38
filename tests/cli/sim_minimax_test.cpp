// `tokenline sim` of MiniMax-M3 (docs/layers.md "MiniMax-M3") under each engine's B200 profile, and
// --weights-format on sim: the deployed MXFP8 checkpoint's bytes leave more KV than the BF16 one's, the
// configuration block says which format ran, and a format tokenline does not know is exit 2 naming the flag.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

// 40 requests of 4,096 / 256 tokens at 4 a second on 8 B200s at TP8 under `engine`'s profile.
testing::ProcessResult sim(const TestDir& dir, const std::string& name, const std::string& flags) {
  return run_tokenline(
      "sim --model minimax-m3 --hardware b200 --gpus 8 --parallel tp8 --kv-layout fp8_e4m3 "
      "--workload synthetic:n=40,input=fixed:4096,output=fixed:256 --rate 4 " +
          flags + " --out '" + dir.file(name) + "'",
      dir);
}

}  // namespace

TEST_CASE("MiniMax-M3 simulates under SGLang, vLLM and TensorRT-LLM, and --weights-format mxfp8 frees KV",
          "[sim_job][minimax][weight_format]") {
  TestDir dir("sim_minimax");
  for (const char* engine : {"sglang", "vllm", "trtllm"}) {
    INFO(engine);
    const auto bf16 = sim(dir, std::string("bf16-") + engine, std::string("--engine ") + engine);
    INFO(bf16.stderr_text);
    REQUIRE(bf16.exit_code == 0);
    const auto mxfp8 = sim(dir, std::string("mxfp8-") + engine,
                           std::string("--engine ") + engine + " --weights-format mxfp8");
    REQUIRE(mxfp8.exit_code == 0);
    const nlohmann::json a = read_json(dir.file(std::string("bf16-") + engine) + "/metrics.json");
    const nlohmann::json b = read_json(dir.file(std::string("mxfp8-") + engine) + "/metrics.json");
    CHECK(a["requests"]["completed"] == 40);
    CHECK(b["requests"]["completed"] == 40);
    // 106.5 GB of BF16 weights a GPU against 55.2 GB of MXFP8 ones: more pages for the KV.
    CHECK(b["kv_pages"]["capacity"].get<int64_t>() > a["kv_pages"]["capacity"].get<int64_t>() * 3 / 2);
    CHECK_FALSE(a["configuration"].contains("weights_format"));
    CHECK(b["configuration"]["weights_format"] == "mxfp8");
  }
  const auto bad = sim(dir, "bad", "--engine vllm --weights-format mxfp6");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.stderr_text, Catch::Contains("--weights-format") && Catch::Contains("mxfp6"));
}

}  // namespace tokenline
