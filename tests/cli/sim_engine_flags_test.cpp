// `tokenline sim` engine-behaviour flags (cli/sim_job.cpp engine_behavior): --reservation estimate,
// --mixed-steps, --plan-ahead, --kv-replicated, --mem-fraction. The KV-capacity limit shows as retractions in
// metrics.json the way SGLang shows it, and only when the latent KV is replicated as real engines keep it.
// The summary line names the step times' source.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

// DeepSeek-V3 on 8 x H200 (tp8), 96 closed-loop clients of 1,024 in / 8,192 out: 96 x 9,216 = 885K tokens
// of KV at full length. Replicated BF16 latent (70,272 B per token per GPU) leaves ~579K tokens; sharded
// over tp8, ~4.6M.
std::string sglang_like(const TestDir& dir, const char* out, const char* replicated) {
  return std::string("sim --model deepseek-v3 --parallel tp8 --concurrency 96 --roofline ") +
         "--workload 'synthetic:n=288,rate=1000,input=fixed:1024,output=fixed:8192,seed=1' " +
         "--reservation estimate --mixed-steps off --mem-fraction 0.89 --chunk 8192 --max-running 2048 " +
         "--kv-replicated " + replicated + " --out '" + dir.file(out) + "'";
}

// Runs `base` into dir/plain and `base flag` into dir/flagged, each to exit 0; their metrics.json.
std::pair<nlohmann::json, nlohmann::json> metrics_without_and_with(const TestDir& dir,
                                                                   const std::string& base, const char* plain,
                                                                   const std::string& flag,
                                                                   const char* flagged) {
  REQUIRE(run_tokenline(base + "--out '" + dir.file(plain) + "'", dir).exit_code == 0);
  REQUIRE(run_tokenline(base + flag + " --out '" + dir.file(flagged) + "'", dir).exit_code == 0);
  return {read_json(dir.file(plain) + "/metrics.json"), read_json(dir.file(flagged) + "/metrics.json")};
}

}  // namespace

TEST_CASE("SGLang-like sim: replicated MLA KV runs out and retracts, sharded KV does not",
          "[sim_job][engine]") {
  TestDir dir("sim_engine_flags");
  REQUIRE(run_tokenline(sglang_like(dir, "replicated", "on"), dir).exit_code == 0);
  REQUIRE(run_tokenline(sglang_like(dir, "sharded", "off"), dir).exit_code == 0);
  const auto rep = read_json(dir.file("replicated/metrics.json"));
  const auto sh = read_json(dir.file("sharded/metrics.json"));
  CHECK(rep["requests"]["completed"] == 288);
  CHECK(rep["requests"]["retractions"].get<int64_t>() > 0);
  CHECK(rep["requests"]["retracted"].get<int64_t>() <= rep["requests"]["preempted"].get<int64_t>());
  CHECK(sh["requests"]["completed"] == 288);
  CHECK(sh["requests"]["retractions"] == 0);
  const double ratio = sh["kv_pages"]["capacity"].get<double>() / rep["kv_pages"]["capacity"].get<double>();
  CHECK(ratio == Approx(8).epsilon(0.01));
  // The queue behind the KV limit: the slowest first tokens wait far longer than when KV suffices.
  CHECK(rep["latency_ms"]["ttft"]["p90"].get<double>() > 4 * sh["latency_ms"]["ttft"]["p90"].get<double>());
}

TEST_CASE("the summary says where step times came from: the roofline, or the profile and its coverage",
          "[sim_job][engine]") {
  TestDir dir("sim_time_source");
  const std::string base = "sim --model deepseek-v3 --parallel tp8 --workload 'synthetic:n=8,seed=1' --out ";
  const auto roof = run_tokenline(base + "'" + dir.file("roof") + "' --roofline", dir);
  const auto prof = run_tokenline(base + "'" + dir.file("prof") + "' --profile h200-sglang", dir);
  REQUIRE(roof.exit_code == 0);
  REQUIRE(prof.exit_code == 0);
  CHECK(roof.stderr_text.find("tokenline sim: step times from the roofline (--roofline)\n") !=
        std::string::npos);
  // the share printed is metrics.json's time_sources.profile_coverage
  const double coverage = read_json(dir.file("prof/metrics.json"))["time_sources"]["profile_coverage"];
  REQUIRE(coverage > 0.5);
  char expected[160];
  std::snprintf(expected, sizeof expected,
                "tokenline sim: step times from profile h200-sglang: %.1f%% of step time measured, the rest "
                "roofline (--profile)\n",
                100 * coverage);
  CHECK(prof.stderr_text.find(expected) != std::string::npos);
}

TEST_CASE("sim --engine with --hardware prices with <hardware>-<engine> and says so", "[sim_job][engine]") {
  TestDir dir("sim_engine_pick");
  const std::string base =
      "sim --model deepseek-v3 --parallel tp8-ep8 --workload 'synthetic:n=8,seed=1' --out ";
  const auto trt = run_tokenline(base + "'" + dir.file("trt") + "' --hardware b200 --engine trtllm", dir);
  REQUIRE(trt.exit_code == 0);
  CHECK(trt.stderr_text.find("tokenline sim: step times from profile b200-trtllm: ") != std::string::npos);
  // Issue 43: GB200's own vLLM profile, named by --engine although its collectives stop at 4 GPUs (the
  // TP8 all-reduces on the roofline; without --engine the default would weigh that).
  const auto gb = run_tokenline(base + "'" + dir.file("gb") + "' --hardware gb200 --engine vllm", dir);
  CHECK(gb.exit_code == 0);
  CHECK(gb.stderr_text.find("tokenline sim: step times from profile gb200-vllm: ") != std::string::npos);
  const auto both =
      run_tokenline(base + "'" + dir.file("both") + "' --engine sglang --profile h200-sglang", dir);
  CHECK(both.exit_code == 2);
  CHECK(both.stderr_text.find("--engine: expected either --engine") != std::string::npos);
}

// A ModelOpt checkpoint that says kv_cache_quant_algo FP8 (nvidia/DeepSeek-V3.1-NVFP4's
// hf_quant_config.json): TensorRT-LLM's auto stores its KV in FP8 - half the bytes of the BF16 latent, about
// twice the tokens in the same pool - where SGLang's auto keeps BF16 on a Hopper GPU; --kv-layout still
// decides.
TEST_CASE("sim --engine trtllm stores an FP8-KV checkpoint's KV in FP8, as TensorRT-LLM's auto does",
          "[sim_job][engine]") {
  TestDir dir("sim_engine_ckpt_kv");
  const std::string base =
      "sim --model '" + testing::source_file("tests/engine/model/data/hf/deepseek-v3.1-nvfp4/config.json") +
      "' --hardware h200 --gpus 8 --parallel tp8-ep8 --workload 'synthetic:n=4,seed=1' ";
  const auto capacity = [&](const std::string& flags, const char* out) {
    const auto r = run_tokenline(base + flags + " --out '" + dir.file(out) + "'", dir);
    INFO(r.stderr_text);
    REQUIRE(r.exit_code == 0);
    return read_json(dir.file(out) + "/metrics.json")["kv_pages"]["capacity"].get<double>();
  };
  const double trt = capacity("--engine trtllm", "trt");
  const double trt_bf16 = capacity("--engine trtllm --kv-layout bf16", "trt_bf16");
  const double trt_fp8 = capacity("--engine trtllm --kv-layout fp8_e4m3", "trt_fp8");
  CHECK(trt == trt_fp8);
  CHECK(trt / trt_bf16 == Approx(2).epsilon(0.02));  // 576 B against 1,152 B a token and layer
  const double sglang = capacity("--engine sglang", "sglang");
  const double sglang_bf16 = capacity("--engine sglang --kv-layout bf16", "sglang_bf16");
  CHECK(sglang == sglang_bf16);
}

// dsa_trtllm_backend 1 where the profile holds no whole-block rows for the model (b300-sglang: its DSA rows
// are kernel-level parts only): the run goes on priced by the DSA parts, and says so once.
TEST_CASE("sim says when the TensorRT-LLM NSA backend has no block rows to price the model",
          "[sim_job][engine]") {
  TestDir dir("sim_dsa_block");
  const std::string base =
      "sim --model glm-5.3 --hardware b300 --gpus 8 --isl 1024 --osl 4 --concurrency 1 --max-requests 1 "
      "--out ";
  const std::string said =
      "b300-sglang holds no whole-block rows of the TensorRT-LLM NSA backend for glm-5.3";
  const auto on = run_tokenline(
      base + "'" + dir.file("on") + "' --engine sglang --profile-set dsa_trtllm_backend=1", dir);
  REQUIRE(on.exit_code == 0);
  CHECK(on.stderr_text.find(said) != std::string::npos);
  const auto off = run_tokenline(base + "'" + dir.file("off") + "' --engine sglang", dir);
  REQUIRE(off.exit_code == 0);
  CHECK(off.stderr_text.find(said) == std::string::npos);
}

// SGLang's own flags for the NSA backends: trtllm in both phases is the profile term dsa_trtllm_backend=1
// (the same run, byte for byte), one phase only keeps the parts and says so, a name outside SGLang's list is
// exit 2 naming the flag. GLM-5 (an indexer on every layer) at TP8 on B200, whose profile has the block rows.
TEST_CASE("sim --nsa-prefill-backend / --nsa-decode-backend trtllm price the DSA block as SGLang runs it",
          "[sim_job][engine]") {
  TestDir dir("sim_nsa_flags");
  const std::string base =
      "sim --model '" + testing::source_file("calibrate/heldout/models/zhipuai--GLM-5_config.json") +
      "' --hardware b200 --engine sglang --parallel tp8 --isl 8192 --osl 32 --concurrency 1 "
      "--max-requests 2 --out ";
  auto run = [&](const std::string& name, const std::string& flags) {
    return run_tokenline(base + "'" + dir.file(name) + "' " + flags, dir);
  };
  auto requests = [&](const std::string& name) {
    std::ifstream in(dir.file(name) + "/requests.csv");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  REQUIRE(run("flags", "--nsa-prefill-backend trtllm --nsa-decode-backend trtllm").exit_code == 0);
  REQUIRE(run("term", "--profile-set dsa_trtllm_backend=1").exit_code == 0);
  REQUIRE(run("default", "").exit_code == 0);
  CHECK(requests("flags") == requests("term"));
  CHECK(requests("flags") != requests("default"));
  const auto one = run("one", "--nsa-prefill-backend trtllm");
  REQUIRE(one.exit_code == 0);
  CHECK(one.stderr_text.find("the TensorRT-LLM NSA backend in one phase only") != std::string::npos);
  CHECK(requests("one") == requests("default"));
  const auto bad = run("bad", "--nsa-decode-backend fast");
  CHECK(bad.exit_code == 2);
  CHECK(bad.stderr_text.find("--nsa-decode-backend: expected one of SGLang's NSA backends") !=
        std::string::npos);
}

TEST_CASE("Bad engine-behaviour flags exit 2 naming the option", "[sim_job][engine]") {
  TestDir dir("sim_engine_flags_bad");
  for (const char* bad :
       {"--reservation eager", "--mixed-steps maybe", "--kv-replicated yes", "--mem-fraction 1.5",
        "--plan-ahead maybe", "--batch-wait 1.5:0.3", "--batch-wait 20:1.2", "--batch-wait 20",
        "--attention-dp-balance 60", "--attention-dp-balance -1:0"}) {
    INFO(bad);
    const auto r = run_tokenline(
        std::string("sim --parallel tp8 --model deepseek-v3 ") + bad + " --out '" + dir.file("o") + "'", dir);
    CHECK(r.exit_code == 2);
    const std::string option = std::string(bad).substr(0, std::string(bad).find(' '));
    CHECK(r.stderr_text.find(option) != std::string::npos);
  }
}

}  // namespace tokenline

namespace tokenline {

// --plan-ahead on: a request arriving while a step runs waits for the step after next, so with arrivals
// spread over busy steps every first token comes later, none earlier (the core's test has the exact steps).
TEST_CASE("sim with plan-ahead on delays first tokens of requests that arrive while a step runs",
          "[sim_job][engine]") {
  TestDir dir("sim_plan_ahead");
  const std::string base =
      "sim --model llama-3.1-8b --parallel tp1 --profile h200-sglang "
      "--workload 'synthetic:n=40,rate=40,input=fixed:512,output=fixed:64,seed=3' ";
  const auto [off, on] = metrics_without_and_with(dir, base, "off", "--plan-ahead on", "on");
  CHECK(on["requests"]["completed"] == 40);
  CHECK(on["latency_ms"]["ttft"]["mean"].get<double>() > off["latency_ms"]["ttft"]["mean"].get<double>());
  CHECK(on["latency_ms"]["ttft"]["p50"].get<double>() >= off["latency_ms"]["ttft"]["p50"].get<double>());
}

// Issue 11: --profile h200-sglang brings SGLang's engine (replicated latent KV, estimate admission with
// retraction, no mixed steps, its chunk size) without a flag; flags still override it field by field.
// Retractions show in trace.json as the request's "retracted" wait (a "queued" wait otherwise).
TEST_CASE("the h200-sglang profile brings SGLang's engine: retractions in metrics and trace",
          "[sim_job][engine][profile]") {
  TestDir dir("sim_engine_profile");
  const std::string base =
      "sim --model deepseek-v3 --parallel tp8 --concurrency 96 --profile h200-sglang "
      "--workload 'synthetic:n=288,rate=1000,input=fixed:1024,output=fixed:8192,seed=1' ";
  const auto [m, sh] = metrics_without_and_with(dir, base, "sglang", "--kv-replicated off", "sharded");
  CHECK(m["requests"]["completed"] == 288);
  CHECK(m["requests"]["retractions"].get<int64_t>() > 0);
  CHECK(sh["requests"]["retractions"] == 0);
  CHECK(m["time_sources"]["profile_coverage"].get<double>() > 0.9);
  const std::string trace = testing::read_all(dir.file("sglang/trace.json"));
  CHECK(trace.find("\"name\":\"retracted\"") != std::string::npos);
  const std::string sharded_trace = testing::read_all(dir.file("sharded/trace.json"));
  CHECK(sharded_trace.find("\"name\":\"retracted\"") == std::string::npos);
}

// SGLang divides its chunked_prefill_size among the DP-attention ranks (server_args.py
// _handle_data_parallelism): on dp8 an H200's default 8192 gives each rank 1024, so one 4,096-token prompt
// takes four chunks. `--chunk` is one rank's budget and is taken as given.
TEST_CASE("the h200-sglang profile splits its default chunk over DP-attention ranks, --chunk is a rank's",
          "[sim_job][engine][profile]") {
  TestDir dir("sim_engine_dp_chunk");
  const std::string base =
      "sim --model deepseek-v3 --parallel dp8-ep8 --profile h200-sglang "
      "--workload 'synthetic:n=1,seed=1,input=fixed:4096,output=fixed:2' ";
  REQUIRE(run_tokenline(base + "--out '" + dir.file("engine") + "'", dir).exit_code == 0);
  REQUIRE(run_tokenline(base + "--chunk 8192 --out '" + dir.file("flag") + "'", dir).exit_code == 0);
  const std::string engine = testing::read_all(dir.file("engine/trace.json"));
  CHECK(engine.find("\"name\":\"prefill chunk 4\",\"args\":{\"tokens\":1024") != std::string::npos);
  CHECK(engine.find("\"name\":\"prefill chunk 5\"") == std::string::npos);
  const std::string flag = testing::read_all(dir.file("flag/trace.json"));
  CHECK(flag.find("\"name\":\"prefill chunk 1\",\"args\":{\"tokens\":4096") != std::string::npos);
  CHECK(flag.find("\"name\":\"prefill chunk 2\"") == std::string::npos);
}

// SGLang runs a DP-attention rank's admission estimate at schedule_conservativeness x 0.3 (new_token_ratio
// 0.21, not 0.7). A copy of h200-sglang with that factor at 1.0 changes what a dp8 rank admits under KV
// pressure, and nothing on tp8, where DP attention is off.
TEST_CASE("the h200-sglang profile's DP-attention conservativeness reaches DP ranks' admission only",
          "[sim_job][engine][profile]") {
  TestDir dir("sim_engine_dp_ratio");
  const std::string copy = dir.file("loose");
  std::filesystem::copy(testing::source_file("topologies/profiles/h200-sglang"), copy);
  std::string json = testing::read_all(copy + "/profile.json");
  const std::string factor = "\"dp_attention_conservativeness\": {\"value\": 0.3";
  const size_t at = json.find(factor);
  REQUIRE(at != std::string::npos);
  json.replace(at, factor.size(), "\"dp_attention_conservativeness\": {\"value\": 1.0");
  {
    std::ofstream out(copy + "/profile.json");
    out << json;
  }
  auto retractions = [&](const std::string& parallel, const std::string& profile, const char* out) {
    const std::string args =
        "sim --model deepseek-v3 --parallel " + parallel + " --profile '" + profile +
        "' --kv-pages 200 --concurrency 64 "
        "--workload 'synthetic:n=128,seed=1,input=fixed:1024,output=fixed:2048' --out '" +
        dir.file(out) + "'";
    REQUIRE(run_tokenline(args, dir).exit_code == 0);
    return read_json(dir.file(out) + "/metrics.json")["requests"]["retractions"].get<int64_t>();
  };
  const int64_t dp_sglang = retractions("dp8-ep8", "h200-sglang", "dp_sglang");
  const int64_t dp_loose = retractions("dp8-ep8", copy, "dp_loose");
  CHECK(dp_sglang > 0);
  CHECK(dp_sglang != dp_loose);
  CHECK(retractions("tp8", "h200-sglang", "tp_sglang") == retractions("tp8", copy, "tp_loose"));
}

// The profile's engine stores its own KV dtype: SGLang on an H200 keeps a DeepSeek-sparse-attention model's
// latent in BF16 (_set_default_nsa_kv_cache_dtype: fp8_e4m3 only from SM100), not the FP8 layout that is
// the model's default; --kv-layout still overrides it. GLM-5.3: 78 layers of latent, 21 with indexer keys.
TEST_CASE("the h200-sglang profile stores a DSA model's KV in BF16 and --kv-layout overrides it",
          "[sim_job][engine][profile]") {
  TestDir dir("sim_engine_kv_dtype");
  const std::string base =
      "sim --model glm-5.3 --parallel tp8 --profile h200-sglang "
      "--workload 'synthetic:n=4,seed=1,input=fixed:512,output=fixed:8' ";
  const auto [bf16, fp8] = metrics_without_and_with(dir, base, "engine", "--kv-layout fp8_ds_mla", "flag");
  const double bf16_token = 1152.0 * 78 + 132 * 21, fp8_token = 656.0 * 78 + 132 * 21;
  const double ratio = fp8["kv_pages"]["capacity"].get<double>() / bf16["kv_pages"]["capacity"].get<double>();
  CHECK(ratio == Approx(bf16_token / fp8_token).epsilon(0.01));
}

}  // namespace tokenline

namespace tokenline {

// A step holds its prefill chunk's window pages until the request's next grow (WindowKvConfig::
// hold_step_context, as the real engine): vLLM's shared pool sets apart room for two steps' chunks, so
// 1,024-token prompts on 4 request slots (4 x 4 pages of 16 tokens for the windows alone) are admitted and
// finish, holding more window pages at the peak than the windows alone, and none after.
TEST_CASE("sim: a window model's prefill chunk holds its window pages through the step and still fits",
          "[sim_job][window]") {
  TestDir dir("sim_window_hold");
  const std::string cmd =
      "sim --model gpt-oss-120b --hardware h200 --profile h200-vllm --parallel tp1 --concurrency 4 "
      "--max-running 4 --chunk 8192 --no-prefix-cache "
      "--workload 'synthetic:n=8,input=fixed:1024,output=fixed:64,seed=1' --out '" +
      dir.file("out") + "'";
  const auto r = run_tokenline(cmd, dir);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("out") + "/metrics.json");
  CHECK(m["requests"]["completed"] == 8);
  const int64_t window_pages_alone = 4 * ((128 + 15) / 16 + 1);  // W = 128, 16-token pages, 4 requests
  CHECK(m["kv_window_pages"]["peak_used_pages"].get<int64_t>() > window_pages_alone);
  CHECK(m["kv_window_pages"]["capacity_pages"].get<int64_t>() >= 4 * (1024 / 16));
}

// Issue 43: TensorRT-LLM's attention-DP balancing (attention_dp_config enable_balance, timeout_iters 60, as
// the published DeepSeek-R1 runs launched it): a prompt that reaches one rank waits until every rank has one
// or 60 steps pass, so first tokens come later, and the run's configuration says so.
TEST_CASE("sim --attention-dp-balance holds prompts until every DP rank has one",
          "[sim_job][engine][trtllm]") {
  TestDir dir("sim_adp_balance");
  const std::string base =
      "sim --model deepseek-v3 --parallel dp8-ep8 --hardware h200 --engine trtllm --concurrency 16 "
      "--workload 'synthetic:n=48,seed=2,input=fixed:256,output=uniform:16:64' ";
  const auto [off, on] = metrics_without_and_with(dir, base, "off", "--attention-dp-balance 60:0", "on");
  CHECK(on["requests"]["completed"] == 48);
  CHECK(on["latency_ms"]["ttft"]["mean"].get<double>() > off["latency_ms"]["ttft"]["mean"].get<double>());
  CHECK(on["configuration"]["engine"]["attention_dp_balance"]["timeout_iters"] == 60);
  CHECK_FALSE(off["configuration"]["engine"].contains("attention_dp_balance"));
}

}  // namespace tokenline

namespace tokenline {

// Issue 44: vLLM's --moe-backend. A name that is not one of vLLM's MoE backends, or the flag on an SGLang
// profile, is exit 2 naming the flag; a backend the profile holds a table of runs and is written to the run's
// configuration.
TEST_CASE("sim --moe-backend: vLLM's backends only, on a vLLM profile", "[sim_job][engine][moe_backend]") {
  TestDir dir("sim_moe_backend");
  const std::string base =
      "sim --model gpt-oss-120b --parallel tp2 --hardware h200 --concurrency 2 "
      "--workload 'synthetic:n=4,seed=1,input=fixed:128,output=fixed:8' ";
  const auto bad =
      run_tokenline(base + "--engine vllm --moe-backend flashinfer --out '" + dir.file("bad") + "'", dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.stderr_text.find("--moe-backend") != std::string::npos);
  CHECK(bad.stderr_text.find("flashinfer_trtllm") != std::string::npos);  // what is expected
  const auto sglang =
      run_tokenline(base + "--engine sglang --moe-backend triton --out '" + dir.file("sglang") + "'", dir);
  CHECK(sglang.exit_code == 2);
  CHECK(sglang.stderr_text.find("--moe-backend") != std::string::npos);
  const auto marlin =
      run_tokenline(base + "--engine vllm --moe-backend marlin --out '" + dir.file("marlin") + "'", dir);
  REQUIRE(marlin.exit_code == 0);
  std::ifstream in(dir.file("marlin") + "/metrics.json");
  const nlohmann::json m = nlohmann::json::parse(in);
  CHECK(m["configuration"]["moe_backend"] == "marlin");
}

// Issue 43: TensorRT-LLM's moe_config.backend, by its names (llmapi/llm_args.py MoeConfig.backend): DEEPGEMM
// prices b200-trtllm's block-FP8 experts by its DeepGEMM table; TRTLLM, which no table times, says so and
// keeps the moe table (CUTLASS's rows); vLLM's spelling is exit 2 naming the flag and TensorRT-LLM's names.
TEST_CASE("sim --moe-backend: TensorRT-LLM's backends on a TensorRT-LLM profile",
          "[sim_job][engine][moe_backend]") {
  TestDir dir("sim_trtllm_moe_backend");
  const std::string base =
      "sim --model deepseek-v3 --parallel dp8-ep8 --hardware b200 --engine trtllm --concurrency 8 "
      "--workload 'synthetic:n=8,seed=1,input=fixed:128,output=fixed:8' ";
  const auto bad = run_tokenline(base + "--moe-backend deep_gemm --out '" + dir.file("bad") + "'", dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.stderr_text.find("--moe-backend") != std::string::npos);
  CHECK(bad.stderr_text.find("DEEPGEMM") != std::string::npos);  // what is expected
  const auto trtllm = run_tokenline(base + "--moe-backend TRTLLM --out '" + dir.file("trtllm") + "'", dir);
  REQUIRE(trtllm.exit_code == 0);
  CHECK(trtllm.stderr_text.find("holds no table of the MoE backend TRTLLM; its moe table (CUTLASS)") !=
        std::string::npos);
  // b200-trtllm has no NVFP4 rows to set aside
  CHECK(trtllm.stderr_text.find("but not") == std::string::npos);
  // b300-trtllm's NVFP4 rows time CUTLASS's kernel (engine.moe_backend.formats): TRTLLM does not reuse them
  const std::string nvfp4 =
      "sim --model deepseek-v3 --weights-format nvfp4 --parallel tp8 --hardware b300 --engine trtllm "
      "--concurrency 8 --workload 'synthetic:n=8,seed=1,input=fixed:128,output=fixed:8' --moe-backend "
      "TRTLLM ";
  const auto b300 = run_tokenline(nvfp4 + "--out '" + dir.file("b300") + "'", dir);
  REQUIRE(b300.exit_code == 0);
  CHECK(b300.stderr_text.find("but not nvfp4 (its rows time CUTLASS's kernel): priced from another format's "
                              "rows, scaled") != std::string::npos);
  const auto deepgemm =
      run_tokenline(base + "--moe-backend DEEPGEMM --out '" + dir.file("deepgemm") + "'", dir);
  REQUIRE(deepgemm.exit_code == 0);
  CHECK(deepgemm.stderr_text.find("holds no table") == std::string::npos);
  std::ifstream in(dir.file("deepgemm") + "/metrics.json");
  const nlohmann::json m = nlohmann::json::parse(in);
  CHECK(m["configuration"]["moe_backend"] == "DEEPGEMM");
}

// Issues 43/44: SGLang's --moe-a2a-backend defaults to none (server_args.py, 0.5.x), and so does the
// h200-sglang engine block: an EP deployment that names no a2a backend is priced with local experts (the
// StandardDispatcher moves no token; each rank runs its experts over the tokens every TP rank holds and the
// layer's all-reduce joins them), exactly as with the flag. deepep adds the all-to-all dispatch and combine:
// same run, more collectives, every step longer, so TPOT rises.
TEST_CASE("sim prices SGLang's EP without an all-to-all unless --moe-a2a-backend deepep",
          "[sim_job][engine]") {
  TestDir dir("sim_moe_a2a");
  const std::string base =
      "sim --model deepseek-v3 --parallel tp8-ep8 --hardware h200 --profile h200-sglang --concurrency 8 "
      "--workload 'synthetic:n=24,seed=3,input=fixed:256,output=fixed:32' ";
  const auto [plain, none] = metrics_without_and_with(dir, base, "plain", "--moe-a2a-backend none", "none");
  const auto [plain2, deepep] =
      metrics_without_and_with(dir, base, "plain2", "--moe-a2a-backend deepep", "deepep");
  CHECK(plain["requests"]["completed"] == 24);
  CHECK(none["latency_ms"]["tpot"]["mean"] == plain["latency_ms"]["tpot"]["mean"]);
  CHECK(none["latency_ms"]["ttft"]["mean"] == plain["latency_ms"]["ttft"]["mean"]);
  CHECK(deepep["latency_ms"]["tpot"]["mean"].get<double>() >
        plain2["latency_ms"]["tpot"]["mean"].get<double>());
  CHECK(none["configuration"]["moe_a2a_backend"] == "none");
  CHECK(deepep["configuration"]["moe_a2a_backend"] == "deepep");
  for (const std::pair<const char*, const char*>& bad :
       {std::pair{"--moe-a2a-backend mooncake",
                  "--moe-a2a-backend: expected none or deepep, found 'mooncake'"},
        std::pair{"--roofline --moe-a2a-backend none", "--moe-a2a-backend: expected a --profile"}}) {
    INFO(bad.first);
    const auto r = run_tokenline("sim --parallel tp8-ep8 --model deepseek-v3 " + std::string(bad.first) +
                                     " --out '" + dir.file("o") + "'",
                                 dir);
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find(bad.second) != std::string::npos);
  }
}

// vLLM's --all2all-backend (vllm/config/parallel.py, default allgather_reducescatter): a dispatching backend
// under data parallelism trades each MoE layer's gather and scatter for a dispatch and combine of the rank's
// own tokens; the run says which it priced. SGLang's flag on a vLLM profile, and vLLM's on an SGLang one,
// are refused naming the other.
TEST_CASE("sim prices vLLM's all-to-all backend as launched, and refuses the other engine's flag",
          "[sim_job][engine]") {
  TestDir dir("sim_all2all");
  const std::string base =
      "sim --model deepseek-v3 --parallel dp8-ep8 --hardware h200 --engine vllm --concurrency 16 "
      "--workload 'synthetic:n=32,seed=3,input=fixed:256,output=fixed:32' ";
  const auto [plain, gather] =
      metrics_without_and_with(dir, base, "plain", "--all2all-backend allgather_reducescatter", "gather");
  const auto [plain2, deepep] =
      metrics_without_and_with(dir, base, "plain2", "--all2all-backend deepep_low_latency", "deepep");
  CHECK(plain["requests"]["completed"] == 32);
  CHECK(gather["latency_ms"]["tpot"]["mean"] == plain["latency_ms"]["tpot"]["mean"]);
  CHECK(deepep["latency_ms"]["tpot"]["mean"] != plain2["latency_ms"]["tpot"]["mean"]);
  CHECK(deepep["configuration"]["all2all_backend"] == "deepep_low_latency");
  for (const std::pair<const char*, const char*>& bad :
       {std::pair{"--engine vllm --all2all-backend mooncake",
                  "--all2all-backend: expected allgather_reducescatter, naive, deepep_high_throughput"},
        std::pair{"--engine sglang --all2all-backend deepep_low_latency",
                  "--all2all-backend: expected a vLLM profile"},
        std::pair{"--engine vllm --moe-a2a-backend deepep", "--moe-a2a-backend: expected an SGLang profile"},
        std::pair{"--roofline --all2all-backend naive", "--all2all-backend: expected a vLLM --profile"}}) {
    INFO(bad.first);
    const auto r = run_tokenline("sim --parallel dp8-ep8 --hardware h200 --model deepseek-v3 " +
                                     std::string(bad.first) + " --out '" + dir.file("o") + "'",
                                 dir);
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find(bad.second) != std::string::npos);
  }
}

// vLLM 0.12-0.16 run block-FP8 experts on DeepGEMM on Hopper (docs/hardware-and-engines.md "vLLM's DeepGEMM
// MoE on Hopper"): a vLLM run on H200 with such experts and no --moe-backend says how to price that; with
// --moe-backend deep_gemm the run says what priced the padding and is slower; B200 (FlashInfer) and a dense
// model say nothing.
TEST_CASE("sim on Hopper vLLM says how to price the DeepGEMM MoE of vLLM 0.12-0.16", "[sim_job][engine]") {
  TestDir dir("sim_dg_moe");
  const std::string minimax = std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/minimax-m2.5/config.json";
  const std::string load =
      "--concurrency 4 --workload 'synthetic:n=8,seed=3,input=fixed:256,output=fixed:32' ";
  const std::string base =
      "sim --model '" + minimax + "' --parallel tp4 --hardware h200 --engine vllm " + load;
  const auto hinted = run_tokenline(base + "--out '" + dir.file("plain") + "'", dir);
  REQUIRE(hinted.exit_code == 0);
  CHECK(hinted.stderr_text.find("--moe-backend deep_gemm prices it") != std::string::npos);
  const auto priced = run_tokenline(base + "--moe-backend deep_gemm --out '" + dir.file("dg") + "'", dir);
  REQUIRE(priced.exit_code == 0);
  CHECK(priced.stderr_text.find("--moe-backend deep_gemm prices it") == std::string::npos);
  CHECK(priced.stderr_text.find("each local expert's rows padded to 128") != std::string::npos);
  // the term set directly prices the padding too: no advice to do what the run already does
  const auto set =
      run_tokenline(base + "--profile-set moe_contiguous_align=128 --out '" + dir.file("set") + "'", dir);
  REQUIRE(set.exit_code == 0);
  CHECK(set.stderr_text.find("--moe-backend deep_gemm prices it") == std::string::npos);
  CHECK(read_json(dir.file("dg") + "/metrics.json")["latency_ms"]["tpot"]["mean"].get<double>() >
        read_json(dir.file("plain") + "/metrics.json")["latency_ms"]["tpot"]["mean"].get<double>());
  // B200 (vLLM prefers FlashInfer's MoE there) and a dense model: nothing said
  for (const std::string& quiet :
       {"sim --model '" + minimax + "' --parallel tp4 --hardware b200 --engine vllm ",
        std::string("sim --model llama-3.1-70b --parallel tp8 --hardware h200 --engine vllm ")}) {
    INFO(quiet);
    const auto r = run_tokenline(quiet + load + "--out '" + dir.file("q") + "'", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(r.stderr_text.find("--moe-backend deep_gemm") == std::string::npos);
  }
}

// SGLang 0.5.9 runs MTP as speculative decoding V1, without its overlap scheduler, unless
// SGLANG_ENABLE_SPEC_V2 is set (cost/op_profile.h apply_speculative_schedule): an --mtp run on an SGLang
// profile prices the serial step and says so; --profile-set overlap_schedule=1 is V2.
TEST_CASE("sim runs SGLang's MTP without the overlap scheduler unless told spec V2", "[sim_job][engine]") {
  TestDir dir("sim_spec_v1");
  const std::string base =
      "sim --model deepseek-v3 --parallel tp8 --hardware b200 --engine sglang --concurrency 4 --mtp 2 "
      "--workload 'synthetic:n=12,seed=5,input=fixed:512,output=fixed:64' ";
  const auto [v1, v2] = metrics_without_and_with(dir, base, "v1", "--profile-set overlap_schedule=1", "v2");
  const std::string line = "MTP as SGLang 0.5.9's speculative decoding V1, without the overlap scheduler";
  auto lists = [&](const nlohmann::json& m) {
    for (const auto& d : m["configuration"]["defaults"])
      if (d.get<std::string>().find(line) != std::string::npos) return true;
    return false;
  };
  CHECK(lists(v1));
  CHECK_FALSE(lists(v2));
  CHECK(v1["latency_ms"]["tpot"]["mean"].get<double>() > v2["latency_ms"]["tpot"]["mean"].get<double>());
  // Without MTP nothing changes: the overlap scheduler stays on.
  const auto [plain, on] = metrics_without_and_with(
      dir,
      "sim --model deepseek-v3 --parallel tp8 --hardware b200 --engine sglang --concurrency 4 "
      "--workload 'synthetic:n=12,seed=5,input=fixed:512,output=fixed:64' ",
      "plain", "--profile-set overlap_schedule=1", "on");
  CHECK_FALSE(lists(plain));
  CHECK(plain["latency_ms"]["tpot"]["mean"] == on["latency_ms"]["tpot"]["mean"]);
}

}  // namespace tokenline
