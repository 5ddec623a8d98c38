// `tokenline sim` of the Kimi Delta Attention hybrids (docs/layers.md "Kimi Linear and Kimi-K3") under each
// engine's rules: the published configs run to the end, hold a state slot per running request and KV for
// their MLA layers only; the real engine refuses them, naming the kernel it lacks.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

std::string config_dir(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/" + name;
}

// 50 requests at 4 a second of the default workload on 8 GPUs (`flags`: the hardware, a layout) under
// `engine`'s profile.
nlohmann::json sim(const TestDir& dir, const char* model, const std::string& flags, const char* engine) {
  const std::string out = dir.file(std::string(model) + "-" + engine);
  const auto r =
      run_tokenline(std::string("sim --model '") + config_dir(model) + "' " + flags + " --gpus 8 --engine " +
                        engine + " --rate 4 --max-requests 50 --out '" + out + "'",
                    dir);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  return read_json(out + "/metrics.json");
}

}  // namespace

TEST_CASE("Kimi Linear and Kimi-K3 simulate under SGLang, vLLM and TensorRT-LLM with a state slot a request",
          "[sim_job][linear][kimi]") {
  TestDir dir("sim_kimi_linear");
  struct Case {
    const char* model;
    const char* flags;
  };
  // Kimi-K3's MXFP4 experts and BF16 rest take 203 GB a GPU at TP8: more than a B200 holds, so a B300, at
  // TP8 (SGLang's default DP attention would hold the BF16 rest whole on every GPU: 294 GB).
  for (const Case& c :
       {Case{"kimi-linear-48b-a3b", "--hardware b200"}, Case{"kimi-k3", "--hardware b300 --parallel tp8"}}) {
    for (const char* engine : {"sglang", "vllm", "trtllm"}) {
      INFO(c.model << " " << engine);
      const nlohmann::json m = sim(dir, c.model, c.flags, engine);
      CHECK(m["requests"]["completed"] == 50);
      REQUIRE(m.contains("state_slots"));
      CHECK(m["state_slots"]["capacity"].get<int64_t>() > 0);
      CHECK(m["state_slots"]["peak"].get<int64_t>() >= 1);
      CHECK(m["state_slots"]["peak"].get<int64_t>() <= m["state_slots"]["capacity"].get<int64_t>());
    }
  }
}

TEST_CASE("Kimi-K3 on 8 B200s is refused: its weights do not fit", "[sim_job][kimi]") {
  TestDir dir("sim_kimi_k3_b200");
  const auto r = run_tokenline(std::string("sim --model '") + config_dir("kimi-k3") +
                                   "' --hardware b200 --gpus 8 --engine sglang --rate 4 --max-requests 50 "
                                   "--out '" +
                                   dir.file("out") + "'",
                               dir);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.stderr_text, Catch::Contains("weights"));
}

TEST_CASE("tokenline ledger names the KDA rows and the attention residuals", "[ledger][kimi]") {
  TestDir dir("ledger_kimi");
  const auto r = testing::run_tokenline_both(std::string("ledger decode --model '") + config_dir("kimi-k3") +
                                                 "' --hardware b300 --gpus 8 --batch 8 --context 4096",
                                             dir);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.stdout_text, Catch::Contains("mixers: 24 attention + 69 kda"));
  CHECK_THAT(r.stdout_text, Catch::Contains("1002 snapshot reads a token"));
  for (const char* op : {"kda_proj", "kda_scan", "attn_res", "latent_proj", "mla_attention"})
    CHECK_THAT(r.stdout_text, Catch::Contains(std::string("\n") + op + " "));
  CHECK_THAT(r.stdout_text, !Catch::Contains("gdn_scan"));
}

TEST_CASE("tokenline run refuses Kimi Linear, naming the kernel it lacks", "[run][kimi]") {
  TestDir dir("run_kimi_linear");
  const auto r = run_tokenline(
      std::string("run --model '") + config_dir("kimi-linear-48b-a3b") +
          "' --workload 'synthetic:n=1,input=fixed:8,output=fixed:2,seed=1' --out '" + dir.file("out") + "'",
      dir);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.stderr_text, Catch::Contains("Kimi Delta Attention") && Catch::Contains("kda_scan"));
}

}  // namespace tokenline
