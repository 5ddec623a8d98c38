#include "calibrate/point_models.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "calibrate/sim_point.h"
#include "common/input_error.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;
using tokenline::testing::TestDir;
namespace fs = std::filesystem;

namespace {

std::string model_data(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/" + name;
}

// A disaggregated row as srt-slurm's recipes launch it and its sa-bench measures it: worker counts recorded,
// 2 x C warm-up, 10 x C measured, lengths in [0.8 L, L], FP8 KV.
void check_srt_slurm_row(const E2ePoint& p) {
  CHECK(p.mode == E2eMode::kDisaggregated);
  CHECK(deployment_recorded(p));
  CHECK(p.warmup_per_client == 2);
  CHECK(p.requests_per_client == 10);
  CHECK(p.length_range_ratio == 0.8);
  CHECK(option_value(p.sim_args, "--kv-layout") == "fp8_e4m3");
}

E2ePoint point(const char* model, const char* precision, const char* gemm) {
  E2ePoint p;
  p.line = 4;
  p.model_path = model;
  p.precision = precision;
  p.gemm_quant_mode = gemm;
  return p;
}

}  // namespace

TEST_CASE("model_path finds <org>--<name>_config.json, instruct tunes their base", "[point_models]") {
  TestDir dir("point-models");
  fs::copy_file(model_data("llama-3.1-8b.json"), dir.file("meta-llama--Meta-Llama-3.1-8B_config.json"));
  fs::copy_file(model_data("qwen3-235b-a22b-fp8.json"), dir.file("Qwen--Qwen3-235B-A22B-FP8_config.json"));
  const std::string models = dir.path().string();
  CHECK(find_model_config(point("Qwen/Qwen3-235B-A22B-FP8", "fp8", "fp8_block"), "e.csv", models) ==
        dir.file("Qwen--Qwen3-235B-A22B-FP8_config.json"));
  CHECK(find_model_config(point("meta-llama/Llama-3.1-8B-Instruct", "fp8", "fp8_block"), "e.csv", models) ==
        dir.file("meta-llama--Meta-Llama-3.1-8B_config.json"));
  CHECK_THROWS_WITH(find_model_config(point("org/Other", "fp8", "fp8"), "e.csv", models),
                    Catch::StartsWith("e.csv:4: model_path: expected org--Other_config.json in ") &&
                        Catch::EndsWith("found no such file for 'org/Other'"));
  CHECK(model_label("meta-llama/Llama-3.1-8B-Instruct") == "Llama-3.1-8B-Instruct");
}

TEST_CASE("A bf16 config run in fp8_block gets an FP8 block-scaled copy, FP8 configs are used as they are",
          "[point_models]") {
  TestDir dir("point-models-fp8");
  fs::copy_file(model_data("llama-3.1-8b.json"), dir.file("meta-llama--Meta-Llama-3.1-8B_config.json"));
  fs::copy_file(model_data("qwen3-235b-a22b-fp8.json"), dir.file("Qwen--Qwen3-235B-A22B-FP8_config.json"));
  const std::vector<E2ePoint> points = {point("meta-llama/Llama-3.1-8B-Instruct", "fp8", "fp8_block"),
                                        point("Qwen/Qwen3-235B-A22B-FP8", "fp8", "fp8_block"),
                                        point("meta-llama/Llama-3.1-8B-Instruct", "bf16", "bfloat16")};
  const PointModels models(points, "e.csv", dir.path().string(), dir.file("out"));
  const std::string& llama_fp8 = models.config_for(points[0]);
  CHECK(llama_fp8.starts_with(dir.file("out/models/")));
  const ModelConfig l = load_hf_config(llama_fp8);
  CHECK(l.weight_dtype == Dtype::kFp8);
  CHECK(l.weight_block == 128);
  CHECK(count_params(l).total() == count_params(load_hf_config(model_data("llama-3.1-8b.json"))).total());
  CHECK(models.config_for(points[1]) == dir.file("Qwen--Qwen3-235B-A22B-FP8_config.json"));
  CHECK(load_hf_config(models.config_for(points[2])).weight_dtype == Dtype::kBf16);
}

TEST_CASE("An MXFP4 checkpoint on a row labelled fp8 runs its own MXFP4 experts, not an FP8 copy",
          "[point_models]") {
  // aiconfigurator's H100 TensorRT-LLM gpt-oss-120b rows say precision fp8, gemm_quant_mode fp8; TensorRT-LLM
  // loads the MXFP4 checkpoint as W4A16_MXFP4 on Hopper (tensorrt_llm/_torch/model_config.py). An FP8 copy
  // would double the experts' bytes (1 instead of 0.5 + 1/32 a parameter).
  TestDir dir("point-models-mxfp4");
  fs::copy_file(model_data("hf/gpt-oss-120b/config.json"), dir.file("openai--gpt-oss-120b_config.json"));
  const std::vector<E2ePoint> points = {point("openai/gpt-oss-120b", "fp8", "fp8")};
  const PointModels models(points, "e.csv", dir.path().string(), dir.file("out"));
  CHECK(models.config_for(points[0]) == dir.file("openai--gpt-oss-120b_config.json"));
  CHECK_FALSE(fs::exists(dir.file("out/models")));
  const ModelConfig m = load_hf_config(models.config_for(points[0]));
  CHECK(m.weights.quantized.kind == WeightFormatKind::kMxfp4);
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1.0);
  CHECK(m.weights.share(WeightGroup::kAttention) == 0.0);
}

TEST_CASE("A row's precision must name the checkpoint's format: fp4, int4 and bf16 rows are checked",
          "[point_models]") {
  // Issue 44: never price an FP4 or BF16 deployment with another checkpoint's weights. An NVFP4 row resolved
  // to the FP8-block base config would run with 1 B weights where the deployment loaded about 0.56.
  TestDir dir("point-models-precision");
  fs::copy_file(model_data("deepseek_v3.json"), dir.file("deepseek-ai--DeepSeek-V3_config.json"));
  fs::copy_file(model_data("hf/deepseek-v3.1-nvfp4/config.json"),
                dir.file("nvidia--DeepSeek-V3.1-NVFP4_config.json"));
  fs::copy_file(model_data("hf/deepseek-v3.1-nvfp4/hf_quant_config.json"),
                dir.file("nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json"));
  fs::copy_file(model_data("hf/kimi-k2.5/config.json"), dir.file("moonshotai--Kimi-K2.5_config.json"));
  fs::copy_file(model_data("hf/gpt-oss-120b/config.json"), dir.file("openai--gpt-oss-120b_config.json"));
  fs::copy_file(model_data("llama-3.1-8b.json"), dir.file("meta-llama--Meta-Llama-3.1-8B_config.json"));
  const std::string models = dir.path().string();
  const std::string out = dir.file("out");

  // Each format on the checkpoint that holds it loads.
  const std::vector<E2ePoint> good = {point("nvidia/DeepSeek-V3.1-NVFP4", "fp4", "nvfp4"),
                                      point("openai/gpt-oss-120b", "fp4", "nvfp4"),  // MXFP4: 4-bit too
                                      point("moonshotai/Kimi-K2.5", "int4", "int4_wo"),
                                      point("meta-llama/Llama-3.1-8B-Instruct", "bf16", ""),
                                      point("deepseek-ai/DeepSeek-V3", "fp8", "fp8"),
                                      point("meta-llama/Llama-3.1-8B-Instruct", "", "")};
  const PointModels loaded(good, "e.csv", models, out);
  CHECK(load_hf_config(loaded.config_for(good[0])).weights.quantized.kind == WeightFormatKind::kNvfp4);

  // An FP4 row on the FP8 base config: refused, naming the row's line and field and what it found.
  E2ePoint fp4 = point("deepseek-ai/DeepSeek-V3", "fp4", "nvfp4");
  fp4.line = 17;
  CHECK_THROWS_WITH(
      PointModels({fp4}, "e.csv", models, out),
      Catch::StartsWith("e.csv:17: precision: expected a config of the FP4 checkpoint") &&
          Catch::Contains("found fp4, with deepseek-ai--DeepSeek-V3_config.json holding fp8-block128"));
  // The same on a later row of a model whose first row is fine (every row is checked, not the first).
  E2ePoint later = point("moonshotai/Kimi-K2.5", "bf16", "int4_wo");
  later.line = 9;
  CHECK_THROWS_WITH(
      PointModels({point("moonshotai/Kimi-K2.5", "int4", "int4_wo"), later}, "e.csv", models, out),
      Catch::StartsWith("e.csv:9: precision: expected a config of the unquantized (BF16)"));
  CHECK_THROWS_AS(PointModels({point("openai/gpt-oss-120b", "int4", "nvfp4")}, "e.csv", models, out),
                  InputError);
  CHECK_THROWS_AS(PointModels({point("meta-llama/Llama-3.1-8B-Instruct", "fp4", "")}, "e.csv", models, out),
                  InputError);
}

TEST_CASE("Models of one shape share an architecture, whatever their names", "[point_models]") {
  TestDir dir("point-models-arch");
  fs::copy_file(model_data("deepseek_v3.json"), dir.file("deepseek-ai--DeepSeek-R1_config.json"));
  fs::copy_file(model_data("deepseek_v3.json"), dir.file("deepseek-ai--DeepSeek-V3_config.json"));
  fs::copy_file(model_data("llama-3.1-8b.json"), dir.file("meta-llama--Meta-Llama-3.1-8B_config.json"));
  const std::vector<E2ePoint> points = {point("deepseek-ai/DeepSeek-R1", "fp8", "fp8"),
                                        point("deepseek-ai/DeepSeek-V3", "fp8", "fp8"),
                                        point("meta-llama/Llama-3.1-8B-Instruct", "bf16", "bfloat16")};
  const PointModels models(points, "e.csv", dir.path().string(), dir.file("out"));
  CHECK(models.architecture_of(points[0]) == models.architecture_of(points[1]));
  CHECK(models.architecture_of(points[0]) != models.architecture_of(points[2]));
}

TEST_CASE("The calibration sets' model configs in the repository load", "[point_models]") {
  const fs::path dir = fs::path(TOKENLINE_SOURCE_DIR) / "calibrate" / "points" / "models";
  // Not FP8-block checkpoints: Qwen3-32B's BF16 config (its H100 TensorRT-LLM rows say gemm_quant_mode fp8,
  // and calibrate writes the FP8 copy: point_models.cpp write_fp8_copy), gpt-oss-120b's MXFP4 experts,
  // Kimi-K2.5's INT4 experts, the NVFP4 checkpoints of the B200 vLLM rows and of the B200 TensorRT-LLM
  // DeepSeek-R1 NVFP4 rows (e2e-b200-trtllm-nvfp4.csv), and Qwen3.5-397B-A17B's BF16 checkpoint
  // (calibrate/unseen's B200 SGLang BF16 rows; validate-fidelity reads unseen's models here).
  const std::set<std::string> other_formats = {"Qwen--Qwen3-32B_config.json",
                                               "openai--gpt-oss-120b_config.json",
                                               "moonshotai--Kimi-K2.5_config.json",
                                               "nvidia--Kimi-K2.5-NVFP4_config.json",
                                               "nvidia--MiniMax-M2.5-NVFP4_config.json",
                                               "Qwen--Qwen3.5-397B-A17B_config.json",
                                               "nvidia--DeepSeek-R1-NVFP4_config.json"};
  int loaded = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    CAPTURE(e.path().string());
    if (e.path().filename().string().ends_with("_hf_quant_config.json")) continue;  // read beside its config
    const ModelConfig m = load_hf_config(e.path().string());
    CHECK(m.layers > 0);
    if (m.hf_model_type != "llama" && !other_formats.count(e.path().filename().string())) {
      CHECK(m.weight_dtype == Dtype::kFp8);
      CHECK(m.weight_block == 128);
    }
    ++loaded;
  }
  // with the Qwen3.5-397B-A17B BF16 and FP8 configs of calibrate/unseen's rows and the DeepSeek-R1 NVFP4 one
  CHECK(loaded == 15);
}

TEST_CASE("the points in the repository parse and every model they name loads", "[point_models]") {
  TestDir dir("point-models-heldout");
  const std::string heldout = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/heldout";
  const std::string glm_path = heldout + "/e2e-glm-5.csv";
  const std::vector<E2ePoint> glm = read_e2e_points(glm_path);
  REQUIRE(glm.size() == 15);
  for (const E2ePoint& p : glm) {
    CHECK(p.model_path == "zhipuai/GLM-5");
    CHECK(p.mode == E2eMode::kAggregated);
    CHECK(p.agg.tp == 8);
    // InferenceX's glm5-fp8-h200-sglang: its memory fraction, no mixed chunk, its client's protocol
    CHECK(p.sim_args == std::vector<std::string>{"--mem-fraction", "0.85", "--mixed-steps", "off"});
    CHECK(p.length_range_ratio == 0.8);
    CHECK(p.requests_per_client == 10);
  }
  const PointModels glm_models(glm, glm_path, heldout + "/models", dir.path().string());
  const ModelConfig m = load_hf_config(glm_models.config_for(glm.front()));
  CHECK(m.layers == 78);  // the seed's architecture
  CHECK(m.has_indexer());
  CHECK(m.routed_experts == 256);
  // DeepSeek-R1 disaggregated as its public recipes deployed it: workers recorded, engine flags per row.
  const std::string r1_path = heldout + "/e2e-deepseek-r1-disagg.csv";
  const std::vector<E2ePoint> r1 = read_e2e_points(r1_path);
  REQUIRE(r1.size() == 27);
  int mtp_runs = 0;  // the sweep's EAGLE recipes (calibrate/heldout/SOURCE.md): --mtp 2, one acceptance
  int dp_prefills = 0;
  for (const E2ePoint& p : r1) {
    if (const std::string drafts = option_value(p.sim_args, "--mtp"); !drafts.empty()) {
      ++mtp_runs;
      CHECK(drafts == "2");  // speculative-num-steps 2, topk 1
    }
    CHECK(p.mode == E2eMode::kDisaggregated);
    CHECK(deployment_recorded(p));
    CHECK_FALSE(p.sim_args.empty());
    // measured by sa-bench: 2 x C warm-up, 10 x C measured requests, lengths in [0.8 L, L]
    CHECK(p.warmup_per_client == 2);
    CHECK(p.requests_per_client == 10);
    CHECK(p.length_range_ratio == 0.8);
    CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));  // valid layouts
    // A DP-attention prefill worker places by bootstrap room (SGLang's PD prefill round_robin); the chunk
    // is one rank's share of the recipe's.
    if (p.prefill.attention_dp > 1) {
      ++dp_prefills;
      CHECK(option_value(p.sim_args, "--dp-assign") == "room");
      CHECK(
          (option_value(p.sim_args, "--chunk") == "32768" || option_value(p.sim_args, "--chunk") == "8192"));
    }
  }
  CHECK(mtp_runs == 14);
  CHECK(dp_prefills == 7);
  const PointModels r1_models(r1, r1_path, heldout + "/models", dir.path().string());
  CHECK(load_hf_config(r1_models.config_for(r1.front())).layers == 61);
  const std::string points = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/points";
  // The SGLang calibration set: the shared rows, with the deployments and clients their source names.
  const std::string sglang_path = points + "/e2e-h200-sglang.csv";
  const std::vector<E2ePoint> sglang = read_e2e_points(sglang_path);
  REQUIRE(sglang.size() == 127);
  int inferencex_agg = 0, inferencex_disagg = 0, aiperf = 0;
  for (const E2ePoint& p : sglang) {
    CHECK_NOTHROW(sim_arguments(p, "m.json", "out", SimPointOptions{}));
    if (p.backend_version == "0.5.9" && p.mode == E2eMode::kAggregated) {
      ++inferencex_agg;
      CHECK(std::find(p.sim_args.begin(), p.sim_args.end(), "--mem-fraction") != p.sim_args.end());
    }
    if (p.backend_version == "0.5.8.post1") ++inferencex_disagg;
    if (p.length_range_ratio == 1) {
      ++aiperf;
      CHECK_FALSE(p.requests_per_client.has_value());
      CHECK(p.sim_args.empty());
    } else {
      CHECK(p.length_range_ratio == 0.8);
      CHECK(p.warmup_per_client == 2);
      CHECK(p.requests_per_client == 10);
    }
  }
  CHECK(inferencex_agg == 30);
  CHECK(inferencex_disagg == 27);
  CHECK(aiperf == 70);
  const PointModels sglang_models(sglang, sglang_path, points + "/models", dir.path().string());
  for (const E2ePoint& p : sglang) CHECK_NOTHROW(sglang_models.config_for(p));
  const std::string vllm_path = points + "/e2e-h200-vllm.csv";
  const std::vector<E2ePoint> vllm = read_e2e_points(vllm_path);
  CHECK(vllm.size() == 113);
  const PointModels vllm_models(vllm, vllm_path, points + "/models", dir.path().string());
  int inferencemax = 0;  // the Llama-3.1-70B rows: InferenceMAX's vLLM 0.10.2 deployment and client
  int deep_gemm = 0;
  for (const E2ePoint& p : vllm) {
    CHECK(p.backend == "vllm");
    CHECK_NOTHROW(parallel_name(p.agg, "test"));  // every layout is one sim runs
    CHECK_NOTHROW(sim_arguments(p, "m.json", "out", SimPointOptions{}));
    if (p.model_path != "meta-llama/Llama-3.1-70B") {
      // aiconfigurator's vLLM 0.12.0 collection: no flags recorded, the release's synchronous scheduling; its
      // block-FP8 MoE model below MoE TP 8 on DeepGEMM (docs/hardware-and-engines.md "vLLM's DeepGEMM MoE on
      // Hopper"), the dense one without
      CHECK(p.backend_version == "0.12.0");
      std::vector<std::string> want = {"--profile-set", "overlap_schedule=0"};
      if (p.model_path == "Qwen/Qwen3-235B-A22B-FP8") {
        REQUIRE(p.agg.moe_tp < 8);
        want.insert(want.end(), {"--moe-backend", "deep_gemm"});
        ++deep_gemm;
      }
      CHECK(p.sim_args == want);
      CHECK(p.length_range_ratio == 1);
      continue;
    }
    ++inferencemax;
    const std::vector<std::string> want = {"--kv-layout", "fp8_e4m3", "--max-running",
                                           std::to_string(p.concurrency)};
    CHECK(std::search(p.sim_args.begin(), p.sim_args.end(), want.begin(), want.end()) != p.sim_args.end());
    CHECK(p.warmup_per_client == 0);
    CHECK(p.requests_per_client == 10);
    CHECK(p.length_range_ratio == 0.8);
  }
  CHECK(inferencemax == 60);
  CHECK(deep_gemm == 32);
}

namespace tokenline {

// Issue 44: the H200 vLLM rows as InferenceX deployed them (calibrate/heldout/SOURCE.md, "Launch flags of the
// vLLM rows"): the flags parse as sim options, MiniMax-M2.5 on 0.18.0 ran expert parallel, gpt-oss's 2026
// rows run their experts on Marlin and its 2025 rows had no warm-up.
TEST_CASE("issue 44: the vLLM held-out rows carry their deployments' flags", "[point_models]") {
  const std::string heldout = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/heldout";
  auto has = [](const E2ePoint& p, const std::string& word) {
    return std::find(p.sim_args.begin(), p.sim_args.end(), word) != p.sim_args.end();
  };
  int minimax_ep = 0, minimax_deep_gemm = 0, kimi = 0;
  for (const E2ePoint& p : read_e2e_points(heldout + "/e2e-h200-vllm-formats.csv")) {
    CAPTURE(p.line);
    CHECK(has(p, "0.95"));  // --mem-fraction 0.95, both scripts
    if (p.model_path == "MiniMaxAI/MiniMax-M2.5" && p.backend_version == "0.18.0") {
      CHECK(p.agg.moe_ep == 8);
      CHECK(p.agg.moe_tp == 1);
      CHECK_FALSE(has(p, "--moe-backend"));  // Triton, the later releases' Hopper default
      ++minimax_ep;
    }
    // vLLM 0.16.0's default on Hopper for block FP8: DeepGEMM at every batch
    if (p.model_path == "MiniMaxAI/MiniMax-M2.5" && p.backend_version == "0.16.0") {
      CHECK(has(p, "--moe-backend"));
      CHECK(has(p, "deep_gemm"));
      ++minimax_deep_gemm;
    }
    if (p.model_path == "moonshotai/Kimi-K2.5") {
      CHECK(has(p, "--max-running"));
      CHECK(has(p, std::to_string(p.concurrency)));
      ++kimi;
    }
    CHECK(p.warmup_per_client == 2);
  }
  CHECK(minimax_ep == 18);
  CHECK(minimax_deep_gemm == 15);
  CHECK(kimi == 15);
  int marlin = 0, no_warmup = 0;
  for (const E2ePoint& p : read_e2e_points(heldout + "/e2e-h200-vllm-gpt-oss.csv")) {
    CAPTURE(p.line);
    CHECK(has(p, "--no-prefix-cache"));
    // VLLM_MXFP4_USE_MARLIN=1 in the 2026 script: Marlin's MXFP4 MoE (vLLM's --moe-backend marlin)
    if (p.backend_version == "0.18.0") {
      CHECK(has(p, "--moe-backend"));
      CHECK(has(p, "marlin"));
      CHECK(p.warmup_per_client == 2);
      ++marlin;
    } else {
      CHECK_FALSE(has(p, "--moe-backend"));
      CHECK(p.warmup_per_client == 0);
      ++no_warmup;
    }
  }
  CHECK(marlin == 51);
  CHECK(no_warmup == 9);
}

// Issues 43 and 44: the B200 vLLM rows that may be fitted (calibrate/points/SOURCE.md, "e2e-b200-vllm.csv";
// scripts/b200-vllm-points): every row parses, every model it names loads in the format its checkpoint
// stores, and the flags are the scripts' at each row's date.
TEST_CASE("issue 44: the B200 vLLM fit set parses and carries its deployments' flags", "[point_models]") {
  TestDir dir("point-models-b200-vllm");
  const std::string points = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/points";
  const std::string path = points + "/e2e-b200-vllm.csv";
  const std::vector<E2ePoint> rows = read_e2e_points(path);
  auto has = [](const E2ePoint& p, const std::string& word) {
    return std::find(p.sim_args.begin(), p.sim_args.end(), word) != p.sim_args.end();
  };
  std::map<std::string, int> per_model;
  std::set<std::tuple<std::string, std::string, int64_t, int64_t, int, int, int, int>> seen;
  for (const E2ePoint& p : rows) {
    CAPTURE(p.line, p.model_path);
    ++per_model[p.model_path];
    CHECK(p.mode == E2eMode::kAggregated);
    CHECK(p.agg.attention_dp == 1);  // attention-DP rows are left out
    CHECK(p.agg.tp == p.agg.moe_tp * p.agg.moe_ep);
    CHECK(has(p, "overlap_schedule=1"));  // async scheduling: every release here ran it
    // one row per (model, precision, lengths, layout, concurrency)
    CHECK(seen.insert({p.model_path, p.precision, p.isl, p.osl, p.agg.tp, p.agg.moe_tp, p.agg.moe_ep,
                       p.concurrency})
              .second);
    if (p.model_path == "meta-llama/Llama-3.1-70B") {
      CHECK(has(p, "512"));  // 70b_fp8_b200_docker.sh: --max-num-seqs 512, not the concurrency
      CHECK(p.warmup_per_client == 0);
    }
    if (p.model_path == "MiniMaxAI/MiniMax-M2.5" && p.backend_version == "0.17.0") {
      CHECK(p.agg.moe_ep == p.agg.tp);  // `-ge 1`: expert parallel whatever the sweep said
      CHECK(has(p, "0.95"));
      CHECK(has(p, "triton"));  // VLLM_USE_FLASHINFER_MOE_FP8=0: --moe-backend triton
    }
    if (p.model_path == "MiniMaxAI/MiniMax-M2.5" && p.backend_version == "0.19.0")
      CHECK_FALSE(has(p, "--moe-backend"));  // vLLM's default: FlashInfer's TensorRT-LLM block-FP8 MoE
    // VLLM_USE_FLASHINFER_MOE_INT4=1: FlashInfer's MxInt4 MoE, b200-vllm's flashinfer_trtllm table
    if (p.model_path == "moonshotai/Kimi-K2.5") CHECK(has(p, "flashinfer_trtllm"));
    if (p.model_path == "nvidia/Kimi-K2.5-NVFP4") {
      CHECK(p.agg.moe_ep == 1);   // no --enable-expert-parallel
      CHECK(has(p, "fp8_e4m3"));  // the checkpoint's FP8 KV scheme, or the script's kv-cache-dtype fp8
    }
  }
  CHECK(per_model["meta-llama/Llama-3.1-70B"] == 60);
  CHECK(per_model["openai/gpt-oss-120b"] == 66);
  CHECK(per_model["moonshotai/Kimi-K2.5"] == 15);
  CHECK(per_model["nvidia/Kimi-K2.5-NVFP4"] == 17);
  CHECK(per_model["MiniMaxAI/MiniMax-M2.5"] == 56);
  CHECK(per_model["nvidia/MiniMax-M2.5-NVFP4"] == 41);
  CHECK(rows.size() == 255);
  const PointModels models(rows, path, points + "/models", dir.path().string());
  std::map<std::string, WeightFormatKind> expert_format;
  for (const E2ePoint& p : rows) {
    if (expert_format.count(p.model_path)) continue;
    const ModelConfig m = load_hf_config(models.config_for(p));
    expert_format[p.model_path] = m.weights.quantized.kind;
  }
  CHECK(expert_format["openai/gpt-oss-120b"] == WeightFormatKind::kMxfp4);
  CHECK(expert_format["moonshotai/Kimi-K2.5"] == WeightFormatKind::kInt4);
  CHECK(expert_format["nvidia/Kimi-K2.5-NVFP4"] == WeightFormatKind::kNvfp4);
  CHECK(expert_format["nvidia/MiniMax-M2.5-NVFP4"] == WeightFormatKind::kNvfp4);
  CHECK(expert_format["MiniMaxAI/MiniMax-M2.5"] == WeightFormatKind::kFp8Block);
}

}  // namespace tokenline

TEST_CASE("issue 43: the B200 SGLang disaggregated fit set carries its recipes' deployments",
          "[point_models]") {
  TestDir dir("point-models-b200-disagg");
  const std::string points = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/points";
  const std::string path = points + "/e2e-b200-sglang-disagg.csv";
  const std::vector<E2ePoint> rows = read_e2e_points(path);
  REQUIRE(rows.size() ==
          13);  // InferenceX 8a02464b8's rows whose recipe is named (calibrate/points/SOURCE.md)
  int dep = 0;
  for (const E2ePoint& p : rows) {
    CHECK(p.model_path == "deepseek-ai/DeepSeek-R1");
    check_srt_slurm_row(p);
    // srt-slurm recipes/b200-fp8: memory fraction 0.85, no radix cache
    CHECK(option_value(p.sim_args, "--mem-fraction") == "0.85");
    // no recipe names a moe-a2a-backend: SGLang's default, no all-to-all under EP, said on every row
    CHECK(option_value(p.sim_args, "--moe-a2a-backend") == "none");
    CHECK(p.prefill.moe_ep == 8);
    CHECK(p.decode.moe_ep == 8);
    CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));
    if (p.prefill.attention_dp > 1) {  // DEP8: one DP rank's share of the chunk and the running cap
      ++dep;
      CHECK(option_value(p.sim_args, "--dp-assign") == "room");
      CHECK(option_value(p.sim_args, "--chunk") == "4096");
      CHECK(option_value(p.sim_args, "--max-running") == "128");
    } else {
      CHECK(p.prefill.tp == 8);
      CHECK(option_value(p.sim_args, "--max-running") == "512");
    }
  }
  CHECK(dep == 3);
  const PointModels models(rows, path, points + "/models", dir.path().string());
  CHECK(load_hf_config(models.config_for(rows.front())).layers == 61);
}

// The B200 and GB200 TensorRT-LLM disaggregated DeepSeek-R1 rows (calibrate/unseen/SOURCE.md; reported, never
// fitted), each with its srt-slurm recipe (recipes/trtllm/<b200|gb200>-fp8 at 5063eb43,
// scripts/trtllm-disagg-points). Every B200 recipe's prefill workers run attention DP but the one-client one;
// the 1,024-token recipes put the experts on EP8 there, the 8,192-token ones on TP8; the decode side's batch,
// fraction and CUDA graphs.
TEST_CASE("issue 43: the B200 and GB200 TensorRT-LLM disaggregated rows carry their recipes",
          "[point_models]") {
  TestDir dir("point-models-b200-trtllm-disagg");
  const std::string root = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate";
  const std::string path = root + "/unseen/e2e-b200-trtllm-disagg.csv";
  const std::vector<E2ePoint> rows = read_e2e_points(path);
  REQUIRE(rows.size() == 50);  // 25 recipes, each measured on 2026-02-12 and on 2026-03-23
  int mtp = 0, balanced = 0;
  for (const E2ePoint& p : rows) {
    CAPTURE(p.line);
    CHECK(p.backend == "trtllm");
    check_srt_slurm_row(p);
    CHECK(option_value(p.sim_args, "--mem-fraction") == "0.8");
    CHECK(option_value(p.sim_args, "--chunk") == (p.isl == 1024 ? "16384" : "8320"));
    CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));
    if (p.concurrency > 1) {
      CHECK(p.prefill.attention_dp == 8);
      CHECK(p.prefill.moe_ep == (p.isl == 1024 ? 8 : 1));
    }
    // the decode workers' CUDA graphs are captured up to their batch
    CHECK(option_value(p.sim_args, "--profile-set") ==
          "cuda_graph_max_bs=" + option_value(p.sim_args, "--max-running"));
    if (!option_value(p.sim_args, "--mtp").empty()) ++mtp;
    if (!option_value(p.sim_args, "--attention-dp-balance").empty()) {
      ++balanced;
      CHECK(p.decode.attention_dp == 8);
    }
  }
  CHECK(mtp == 24);
  CHECK(balanced == 6);
  const PointModels models(rows, path, root + "/points/models", dir.path().string());
  CHECK(load_hf_config(models.config_for(rows.front())).layers == 61);

  // GB200 (recipes/trtllm/gb200-fp8): DEP8 prefill workers; decode workers of 8 GPUs under attention TP with
  // the experts on EP8, or of 8, 16 or 32 GPUs of one NVL72 rack under attention DP.
  std::map<int, int> decode_dp;
  const std::vector<E2ePoint> gb200 = read_e2e_points(root + "/unseen/e2e-gb200-trtllm-disagg.csv");
  for (const E2ePoint& p : gb200) {
    CAPTURE(p.line);
    CHECK(p.backend == "trtllm");
    check_srt_slurm_row(p);
    CHECK(option_value(p.sim_args, "--chunk") == "16384");
    CHECK(p.prefill.attention_dp == 8);
    CHECK(p.prefill.moe_ep == 8);
    CHECK(p.decode.tp * p.decode.attention_dp == p.decode.moe_ep);  // every decode worker's experts on EP
    CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));
    ++decode_dp[p.decode.attention_dp];
  }
  CHECK(gb200.size() == 21);
  CHECK(decode_dp == std::map<int, int>{{1, 10}, {8, 1}, {16, 4}, {32, 6}});

  // B300 (4-GPU prefill workers), GB300 and H100 (16-GPU workers over two nodes): each row names its
  // workers and runs; the counts are the rows whose recipe the sources settle (calibrate/unseen/SOURCE.md).
  const std::pair<const char*, size_t> others[] = {{"b300", 18}, {"gb300", 25}, {"h100", 9}};
  for (const auto& [gpu, count] : others) {
    const std::vector<E2ePoint> set =
        read_e2e_points(root + "/unseen/e2e-" + std::string(gpu) + "-trtllm-disagg.csv");
    CHECK(set.size() == count);
    for (const E2ePoint& p : set) {
      CAPTURE(gpu, p.line);
      check_srt_slurm_row(p);
      CHECK(p.prefill.attention_dp == (std::string(gpu) == "h100" ? 16 : 4));
      CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));
    }
  }
}

// Issue 43: the H200 TensorRT-LLM DeepSeek-R1 rows as InferenceX launched them (calibrate/heldout/SOURCE.md;
// scripts/annotate-trtllm-points). The 1.1.0rc2.post2 rows are the dsr1-fp8-h200-trt-mtp config (measured
// with bf3456727, which swept only the MTP configs; one 2026-01-28 row whose config no source names stays
// plain): speculative_config MTP 3 (1 under attention DP), --max_batch_size C (C / 8), max_num_tokens
// ((MTP + 1) x max_batch_size + ISL + 127) / 64 x 64, and no client warm-up before 2026-01-21 (d053ae24e).
TEST_CASE("issue 43: the H200 TensorRT-LLM DeepSeek-R1 rows carry the MTP config they ran",
          "[point_models]") {
  const std::string heldout = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/heldout";
  int mtp3 = 0, mtp1 = 0, plain = 0, warmed = 0;
  for (const E2ePoint& p : read_e2e_points(heldout + "/e2e-h200-trtllm.csv")) {
    if (p.model_path != "deepseek-ai/DeepSeek-R1") continue;
    CAPTURE(p.line);
    CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));
    CHECK(option_value(p.sim_args, "--mem-fraction") == "0.75");  // free_gpu_memory_fraction, every script
    CHECK(option_value(p.sim_args, "--kv-layout") == "fp8_e4m3");
    CHECK(p.agg.moe_ep == 8);
    CHECK(p.requests_per_client == 10);
    CHECK(p.length_range_ratio == 0.8);
    if (p.warmup_per_client == 2) {  // the 2026-01-28 sweep (e28c038f8: --num-warmups 2 x C)
      ++warmed;
    } else {
      CHECK(p.warmup_per_client == 0);
    }
    const std::string drafts = option_value(p.sim_args, "--mtp");
    if (drafts.empty()) {
      ++plain;
      CHECK(option_value(p.sim_args, "--max-running").empty());  // the plain script passes no max_batch_size
      continue;
    }
    CHECK(p.backend_version == "1.1.0rc2.post2");
    const bool dp = p.agg.attention_dp > 1;
    const int64_t mtp = dp ? 1 : 3;
    const int64_t batch = dp ? p.concurrency / p.agg.attention_dp : p.concurrency;
    CHECK(drafts == std::to_string(mtp));
    CHECK(option_value(p.sim_args, "--max-running") == std::to_string(batch));
    CHECK(option_value(p.sim_args, "--chunk") == std::to_string(((mtp + 1) * batch + p.isl + 127) / 64 * 64));
    CHECK(option_value(p.sim_args, "--attention-dp-balance") == (dp ? "60:0" : ""));
    ++(dp ? mtp1 : mtp3);
  }
  CHECK(mtp3 == 14);
  CHECK(mtp1 == 6);
  CHECK(plain == 16);  // 15 of 2025-11-02 and the 2026-01-28 64-client row
  CHECK(warmed == 2);
}

// Issue 44: the B200 SGLang DeepSeek-R1 NVFP4 rows as InferenceX's dsr1-fp4-b200-sglang launched them
// (calibrate/heldout/SOURCE.md, weight formats; scripts/heldout-formats), not the FP8 script's flags they
// carried until 2026-12-05 (--max-running 32 at TP4, 512 / 256 at TP8; 2·C warm-up; MoE TP on the 2025 rows).
// 0.5.9 rows: benchmarks/single_node/dsr1_fp4_b200.sh at 12ba0ae07 and benchmark_lib.sh's 2·C warm-up; the
// unversioned 2025 rows: benchmarks/dsr1_fp4_b200_docker.sh at 79abd6cb4 (--enable-ep-moe: EP = TP) and the
// runner's kimbochen/bench_serving call without warm-up. GLM-5 NVFP4:
// benchmarks/single_node/glm5_nvfp4_b200.sh at d43805fc3 (the rows' day and image): memory fraction 0.80,
// chunk 131072, caps at the concurrency.
TEST_CASE("issue 44: the B200 SGLang NVFP4 rows carry the flags dsr1_fp4_b200.sh and glm5_nvfp4_b200.sh gave",
          "[point_models]") {
  const std::string heldout = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/heldout";
  int r1 = 0, v059 = 0, v2025 = 0, glm = 0;
  for (const E2ePoint& p : read_e2e_points(heldout + "/e2e-b200-sglang-nvfp4.csv")) {
    if (p.model_path == "nvidia/GLM-5-NVFP4") {  // glm5_nvfp4_b200.sh at d43805fc3: caps at the concurrency
      CAPTURE(p.line);
      ++glm;
      CHECK_NOTHROW(sim_arguments(p, "glm.json", "out", SimPointOptions{}));
      CHECK(option_value(p.sim_args, "--mem-fraction") == "0.80");
      CHECK(option_value(p.sim_args, "--chunk") == "131072");
      CHECK(option_value(p.sim_args, "--max-prefill-tokens") == "16384");
      CHECK(option_value(p.sim_args, "--max-running") == std::to_string(p.concurrency));
      CHECK(option_value(p.sim_args, "--profile-set") ==
            "cuda_graph_max_bs=" + std::to_string(p.concurrency));
      CHECK(p.warmup_per_client == 2);
      continue;
    }
    if (p.model_path != "nvidia/DeepSeek-R1-NVFP4") continue;
    CAPTURE(p.line);
    ++r1;
    CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));
    // the same server flags at both dates
    CHECK(option_value(p.sim_args, "--mem-fraction") == "0.85");
    CHECK(option_value(p.sim_args, "--chunk") == "16384");
    CHECK(option_value(p.sim_args, "--max-prefill-tokens") == "16384");  // SGLang's default
    CHECK(option_value(p.sim_args, "--max-running") == "256");
    CHECK(option_value(p.sim_args, "--profile-set") == "cuda_graph_max_bs=256");
    CHECK(option_value(p.sim_args, "--kv-layout") == "fp8_e4m3");
    CHECK(option_value(p.sim_args, "--moe-runner-backend") == "flashinfer_trtllm");
    CHECK(option_value(p.sim_args, "--moe-a2a-backend") == "none");  // none passed: SGLang's default
    CHECK(option_value(p.sim_args, "--scheduler-recv-interval") == (p.concurrency >= 16 ? "30" : "10"));
    CHECK(option_value(p.sim_args, "--mtp").empty());  // dsr1-fp4-b200-sglang names no spec-decoding
    CHECK(std::find(p.sim_args.begin(), p.sim_args.end(), "--no-prefix-cache") != p.sim_args.end());
    // experts split over the TP ranks at both dates (--ep-size $EP_SIZE = TP; 2025: --enable-ep-moe)
    CHECK(p.agg.tp == p.agg.moe_ep);
    CHECK(p.agg.moe_tp == 1);
    CHECK(p.requests_per_client == 10);
    CHECK(p.length_range_ratio == 0.8);
    if (p.backend_version == "0.5.9") {
      ++v059;
      CHECK(p.warmup_per_client == 2);
    } else {
      ++v2025;
      CHECK(p.backend_version.empty());
      CHECK(p.warmup_per_client == 0);
    }
  }
  CHECK(r1 == 54);
  CHECK(v059 == 18);
  CHECK(v2025 == 36);
  CHECK(glm == 10);
}

// Issue 43: the H100 vLLM Llama-3.1-70B rows as InferenceMAX launched them (calibrate/heldout/SOURCE.md, the
// H100 vLLM entry; scripts/annotate-h100-vllm-points). 70b_fp8_h100_{docker,slurm}.sh at InferenceX 9596d23d7
// pass `--config=config.yaml`, which vLLM 0.10.2 never expands (FlexibleArgumentParser reads a config file
// only when `--config` is an argument of its own), so the file's FP8 KV, async scheduling and disabled prefix
// cache did not apply: BF16 KV (vLLM's `auto`), no overlap, prefix caching on; the command line's
// --gpu-memory-utilization 0.9 and --max-num-seqs C did.
TEST_CASE("issue 43: the H100 vLLM rows carry the flags vLLM applied (config.yaml was ignored)",
          "[point_models]") {
  const std::string path = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/heldout/e2e-h100-vllm.csv";
  auto after = [](const E2ePoint& p, const std::string& flag) -> std::string {
    const auto it = std::find(p.sim_args.begin(), p.sim_args.end(), flag);
    return it == p.sim_args.end() || it + 1 == p.sim_args.end() ? std::string("(absent)") : *(it + 1);
  };
  auto has = [](const E2ePoint& p, const std::string& word) {
    return std::find_if(p.sim_args.begin(), p.sim_args.end(), [&](const std::string& a) {
             return a.find(word) != std::string::npos;
           }) != p.sim_args.end();
  };
  std::map<int, int> per_tp;
  for (const E2ePoint& p : read_e2e_points(path)) {
    CAPTURE(p.line);
    CHECK(p.model_path == "meta-llama/Llama-3.1-70B");
    CHECK(p.backend == "vllm");
    CHECK(p.mode == E2eMode::kAggregated);
    ++per_tp[p.agg.tp];
    CHECK(after(p, "--kv-layout") == "bf16");  // kv_cache_dtype auto: the model's BF16
    CHECK(after(p, "--max-running") == std::to_string(p.concurrency));  // --max-num-seqs=$CONC
    CHECK(after(p, "--mem-fraction") == "0.9");                         // --gpu-memory-utilization=0.9
    CHECK(after(p, "--chunk") == "8192");      // max_num_batched_tokens default, API server, >= 70 GiB
    CHECK(has(p, "overlap_schedule=0"));       // 0.10.2: async_scheduling default False
    CHECK_FALSE(has(p, "--no-prefix-cache"));  // V1 default: prefix caching on
    CHECK_FALSE(has(p, "fp8_e4m3"));
    CHECK(p.warmup_per_client == 0);
    CHECK(p.requests_per_client == 10);
    CHECK(p.length_range_ratio == 0.8);
  }
  CHECK(per_tp == std::map<int, int>{{2, 15}, {4, 15}, {8, 15}});
}

// Issue 43: aiconfigurator's B200 SGLang rows labelled DeepSeek-V3 are InferenceX's DeepSeek-R1 runs (their
// TTFT and TPOT are R1 rows' to the last digit; calibrate/heldout/SOURCE.md): the files hold only the runs no
// other held-out file holds, with the scripts of their dates - config 87, dsr1_fp8_b200.sh at 12ba0ae07 (TP8:
// 128 running, graphs to 128), and config 199, dsr1_fp8_b200_docker.sh at 0ba7aa3ff with ep 8 (until
// 189ae51cc) and the runner's client without warm-up; the NVFP4 rows as e2e-b200-sglang-nvfp4.csv's 0.5.9
// rows.
TEST_CASE("issue 43: the B200 SGLang rows labelled DeepSeek-V3 are R1 runs held out once, as launched",
          "[point_models]") {
  const std::string heldout = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/heldout";
  // one run's figures: its copies in the source differ only in the last printed digits
  auto measured = [](const E2ePoint& p) {
    return std::make_pair(std::llround(p.ttft_ms * 1e3), std::llround(p.tpot_ms * 1e4));
  };
  std::set<std::pair<long long, long long>> held;
  for (const char* name : {"/e2e-b200-sglang.csv", "/e2e-b200-sglang-nvfp4.csv"})
    for (const E2ePoint& p : read_e2e_points(heldout + name)) held.insert(measured(p));

  int v059 = 0, v2025 = 0;
  const std::vector<E2ePoint> fp8 = read_e2e_points(heldout + "/e2e-b200-sglang-v3.csv");
  for (const E2ePoint& p : fp8) {
    CAPTURE(p.line);
    CHECK(p.model_path == "deepseek-ai/DeepSeek-R1");  // what dsr1-fp8-b200-sglang served
    CHECK(held.count(measured(p)) == 0);
    CHECK_NOTHROW(sim_arguments(p, "r1.json", "out", SimPointOptions{}));
    CHECK(option_value(p.sim_args, "--mem-fraction") == "0.82");
    CHECK(option_value(p.sim_args, "--chunk") == "32768");
    CHECK(option_value(p.sim_args, "--max-running") == "128");
    CHECK(option_value(p.sim_args, "--profile-set") == "cuda_graph_max_bs=128");
    CHECK(option_value(p.sim_args, "--moe-a2a-backend") == "none");
    CHECK(option_value(p.sim_args, "--scheduler-recv-interval") == (p.concurrency >= 16 ? "30" : "10"));
    CHECK(option_value(p.sim_args, "--mtp").empty());  // config 87 is the plain sweep, not its -mtp twin
    CHECK(p.agg.tp == 8);
    if (p.backend_version == "0.5.9") {
      ++v059;
      CHECK(p.agg.moe_ep == 1);
      CHECK(p.warmup_per_client == 2);
    } else {  // 2025-11-18: --ep-size 8 (the database's tp_size 64 is TP x EP)
      ++v2025;
      CHECK(p.agg.moe_ep == 8);
      CHECK(p.agg.moe_tp == 1);
      CHECK(p.warmup_per_client == 0);
    }
  }
  CHECK(v059 == 4);
  CHECK(v2025 == 15);

  const std::vector<E2ePoint> fp4 = read_e2e_points(heldout + "/e2e-b200-sglang-v3-nvfp4.csv");
  for (const E2ePoint& p : fp4) {
    CAPTURE(p.line);
    CHECK(p.model_path == "nvidia/DeepSeek-R1-NVFP4");
    CHECK(held.count(measured(p)) == 0);
    CHECK(p.backend_version == "0.5.9");
    CHECK(option_value(p.sim_args, "--mem-fraction") == "0.85");  // dsr1_fp4_b200.sh at 12ba0ae07
    CHECK(option_value(p.sim_args, "--max-running") == "256");
    CHECK(p.agg.tp == p.agg.moe_ep);  // TP4-EP4 and TP8-EP8, not the database's tp_size 16 / 64
    CHECK((p.agg.tp == 4 || p.agg.tp == 8));
    CHECK(p.agg.moe_tp == 1);
    CHECK(p.warmup_per_client == 2);
  }
  CHECK(fp4.size() == 15);

  TestDir dir("point-models-v3");
  const PointModels r1(fp8, heldout + "/e2e-b200-sglang-v3.csv", heldout + "/models", dir.path().string());
  CHECK(load_hf_config(r1.config_for(fp8.front())).layers == 61);
  CHECK_NOTHROW(
      PointModels(fp4, heldout + "/e2e-b200-sglang-v3-nvfp4.csv", heldout + "/models", dir.path().string()));
}

// The --profile-set value a B200 SGLang row's run gets: calibrate merges the row's repeated --profile-set
// options into one, and passes them only to runs priced by a profile.
namespace {
std::string b200_sglang_profile_sets(const E2ePoint& p) {
  SimPointOptions priced;
  priced.extra_args = {"--profile", "b200-sglang"};
  return option_value(sim_arguments(p, "model.json", "out", priced), "--profile-set");
}
}  // namespace

// The B200 SGLang DeepSeek-R1 rows of InferenceX's dsr1-fp8-b200-sglang-mtp (calibrate/heldout/SOURCE.md,
// "The MTP rows of e2e-b200-sglang.csv"): EAGLE with two drafts a step, and the overlap scheduler off - the
// script's SGLANG_ENABLE_SPEC_V2=1 is a shell assignment never exported, so SGLang 0.5.9 ran spec V1, for
// which it disables overlap scheduling. The plain sweep (config 87) keeps SGLang's default, overlap on.
TEST_CASE("the B200 SGLang R1 MTP rows run EAGLE without the overlap scheduler, as launched",
          "[point_models]") {
  const std::string heldout = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate/heldout";
  int mtp = 0, plain = 0;
  for (const E2ePoint& p : read_e2e_points(heldout + "/e2e-b200-sglang.csv")) {
    if (p.model_path != "deepseek-ai/DeepSeek-R1") continue;
    CAPTURE(p.line);
    const std::string sets = b200_sglang_profile_sets(p);
    if (option_value(p.sim_args, "--mtp").empty()) {
      ++plain;
      CHECK(sets.find("overlap_schedule") == std::string::npos);
      continue;
    }
    ++mtp;
    CHECK(option_value(p.sim_args, "--mtp") == "2");
    CHECK(sets == "cuda_graph_max_bs=512,overlap_schedule=0");
    CHECK(option_value(p.sim_args, "--chunk") == "16384");
    CHECK(p.backend_version == "0.5.9");
    CHECK(p.agg.tp == 8);
  }
  CHECK(mtp == 17);
  CHECK(plain == 12);
}

// The B200 SGLang Qwen3.5-397B-A17B rows (calibrate/unseen/SOURCE.md; reported, never fitted): InferenceX's
// runs at their dates - qwen3.5_fp8_b200.sh (efd49e50b, 6a5dad463), the EAGLE MTP config
// qwen3.5_fp8_b200_mtp.sh (35d4bb367: 3 steps, caps at the concurrency, fraction 0.8) and
// qwen3.5_bf16_b200.sh (9dc87a68c: no --kv-cache-dtype, so the BF16 model's dtype). Their configs resolve
// from calibrate/points/models (validate-fidelity's models folder for calibrate/unseen) in the rows' formats.
TEST_CASE("the B200 SGLang Qwen3.5 rows carry the scripts of their dates", "[point_models]") {
  const std::string root = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate";
  int mtp = 0, plain = 0;
  std::map<int, int> plain_per_tp;
  const std::vector<E2ePoint> fp8 = read_e2e_points(root + "/unseen/e2e-b200-sglang-qwen35.csv");
  for (const E2ePoint& p : fp8) {
    CAPTURE(p.line);
    CHECK(p.model_path == "Qwen/Qwen3.5-397B-A17B-FP8");
    CHECK(p.precision == "fp8");
    CHECK_NOTHROW(sim_arguments(p, "q.json", "out", SimPointOptions{}));
    CHECK(option_value(p.sim_args, "--kv-layout") == "fp8_e4m3");
    CHECK(option_value(p.sim_args, "--chunk") == "32768");
    CHECK(option_value(p.sim_args, "--moe-runner-backend") == "flashinfer_trtllm");
    CHECK(option_value(p.sim_args, "--scheduler-recv-interval") == (p.concurrency >= 16 ? "30" : "10"));
    CHECK(p.warmup_per_client == 2);
    const std::string sets = b200_sglang_profile_sets(p);
    if (!option_value(p.sim_args, "--mtp").empty()) {
      ++mtp;
      CHECK(option_value(p.sim_args, "--mtp") == "3");
      // no SGLANG_ENABLE_SPEC_V2 in the script at 35d4bb367: spec V1, SGLang turns the overlap scheduler off
      CHECK(sets == "cuda_graph_max_bs=" + std::to_string(p.concurrency) + ",overlap_schedule=0");
      CHECK(option_value(p.sim_args, "--mem-fraction") == "0.80");
      CHECK(option_value(p.sim_args, "--max-running") == std::to_string(p.concurrency));
      CHECK(p.agg.tp == 4);
      CHECK(p.agg.moe_ep == 1);
    } else {
      ++plain;
      ++plain_per_tp[p.agg.tp];
      CHECK(sets == "cuda_graph_max_bs=" + std::to_string(p.concurrency));
      CHECK(option_value(p.sim_args, "--mem-fraction") == "0.82");
      CHECK(option_value(p.sim_args, "--max-running") == "128");
      CHECK(p.agg.moe_ep == (p.agg.tp == 4 ? 4 : 1));  // TP4 with --ep-size 4, TP8 with 1
    }
  }
  CHECK(mtp == 21);
  CHECK(plain == 25);
  CHECK(plain_per_tp[8] == 9);

  const std::vector<E2ePoint> bf16 = read_e2e_points(root + "/unseen/e2e-b200-sglang-qwen35-bf16.csv");
  for (const E2ePoint& p : bf16) {
    CAPTURE(p.line);
    CHECK(p.model_path == "Qwen/Qwen3.5-397B-A17B");
    CHECK(p.precision == "bf16");
    CHECK(option_value(p.sim_args, "--kv-layout") == "bf16");
    CHECK(option_value(p.sim_args, "--max-running") == "128");
    CHECK(option_value(p.sim_args, "--mtp").empty());
    CHECK(p.agg.tp == 8);
  }
  CHECK(bf16.size() == 16);

  TestDir dir("point-models-qwen35");
  const std::string models = root + "/points/models";
  const PointModels q8(fp8, root + "/unseen/e2e-b200-sglang-qwen35.csv", models, dir.path().string());
  const PointModels q16(bf16, root + "/unseen/e2e-b200-sglang-qwen35-bf16.csv", models, dir.path().string());
  CHECK(q8.config_for(fp8.front()) != q16.config_for(bf16.front()));  // the FP8 checkpoint, the BF16 one
}

// Issue 43: the H100 SGLang and vLLM rows no file held until 2026-12-06 (calibrate/heldout/SOURCE.md and
// calibrate/unseen/SOURCE.md, "H100 SGLang and vLLM"; scripts/h100-heldout-points). aiconfigurator's own
// Qwen3-32B collection records no launch flags or client: empty cells (calibrate's aiperf template, the
// engines' defaults, vLLM 0.12 without async scheduling). The InferenceX MiniMax-M2.5 and gpt-oss-120b rows
// carry their scripts' flags at the commits of their dates; the 512-client gpt-oss rows, in no sweep of those
// dates, are left out.
TEST_CASE("issue 43: the H100 SGLang and vLLM rows as recorded, and their configs resolve",
          "[point_models]") {
  TestDir dir("point-models-h100");
  const std::string root = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate";
  auto has = [](const E2ePoint& p, const std::string& word) {
    return std::find_if(p.sim_args.begin(), p.sim_args.end(), [&](const std::string& a) {
             return a.find(word) != std::string::npos;
           }) != p.sim_args.end();
  };
  std::map<std::string, int> sglang_per_version;
  for (const char* name : {"/heldout/e2e-h100-sglang.csv", "/heldout/e2e-h100-vllm-qwen3.csv"}) {
    const std::vector<E2ePoint> rows = read_e2e_points(root + name);
    for (const E2ePoint& p : rows) {
      CAPTURE(name, p.line);
      CHECK(p.model_path == "Qwen/Qwen3-32B");
      CHECK(p.mode == E2eMode::kAggregated);
      // no flags recorded; vLLM 0.12's synchronous scheduling said (the profiles' default is 0.14's async)
      if (p.backend == "sglang") CHECK(p.sim_args.empty());
      if (p.backend == "vllm")
        CHECK(p.sim_args == std::vector<std::string>{"--profile-set", "overlap_schedule=0"});
      CHECK_FALSE(p.warmup_per_client.has_value());
      CHECK_FALSE(p.requests_per_client.has_value());
      CHECK(p.length_range_ratio == 1);
      CHECK(p.agg.tp * p.agg.attention_dp <= 8);
      if (p.backend == "sglang") ++sglang_per_version[p.backend_version];
      if (p.backend == "vllm") CHECK(p.backend_version == "0.12.0");
    }
    // The held-out file's model resolves in calibrate/heldout/models (the fit set's copy of
    // aiconfigurator's).
    const PointModels models(rows, root + name, root + "/heldout/models", dir.path().string());
    CHECK(fs::path(models.config_for(rows.front())).filename() == "Qwen--Qwen3-32B_config.json");
  }
  CHECK(sglang_per_version == std::map<std::string, int>{{"0.5.1.post1", 78}, {"0.5.8.post1", 6}});
  CHECK(read_e2e_points(root + "/heldout/e2e-h100-vllm-qwen3.csv").size() == 93);
  int minimax_prefix_on = 0, minimax_prefix_off = 0, gptoss_2026 = 0, gptoss_2025 = 0;
  for (const E2ePoint& p : read_e2e_points(root + "/unseen/e2e-h100-vllm.csv")) {
    CAPTURE(p.line, p.model_path);
    CHECK(p.concurrency <= 64);  // the sweeps' 4-64 clients
    CHECK(p.agg.attention_dp == 1);
    CHECK(has(p, "--mem-fraction"));
    if (p.model_path == "MiniMaxAI/MiniMax-M2.5") {
      CHECK(p.agg.tp == 4);  // the sweep's only entry, { tp: 4, ep: 4 }: --enable-expert-parallel
      CHECK(p.agg.moe_ep == 4);
      CHECK(p.agg.moe_tp == 1);
      CHECK(has(p, "overlap_schedule=1"));  // vLLM 0.18: async scheduling by default
      CHECK(p.warmup_per_client == 2);
      ++(has(p, "--no-prefix-cache") ? minimax_prefix_off : minimax_prefix_on);
    } else if (p.backend_version == "0.18.0") {
      CHECK(has(p, "marlin"));  // VLLM_MXFP4_USE_MARLIN=1
      CHECK(has(p, "overlap_schedule=1"));
      CHECK(has(p, "--no-prefix-cache"));
      CHECK(p.warmup_per_client == 2);
      ++gptoss_2026;
    } else {
      // vLLM 0.10.2 ignored `--config=config.yaml`: no async scheduling, no Marlin variable, prefix caching
      // on
      CHECK(has(p, "overlap_schedule=0"));
      CHECK_FALSE(has(p, "marlin"));
      CHECK_FALSE(has(p, "--no-prefix-cache"));
      CHECK(p.warmup_per_client == 0);
      ++gptoss_2025;
    }
  }
  CHECK(minimax_prefix_on == 15);
  CHECK(minimax_prefix_off == 15);
  CHECK(gptoss_2026 == 43);
  CHECK(gptoss_2025 == 2);
}

// Issue 43: the TensorRT-LLM gpt-oss-120b and DeepSeek-V3 rows no other file held
// (scripts/trtllm-cover-points; calibrate/points, heldout and unseen SOURCE.md). Each row carries the MoE
// backend its InferenceX script launched (gpt-oss: TRITON on H200, TRTLLM on B200; DeepSeek-R1 FP8: CUTLASS
// on H200, DEEPGEMM on B200 before 2026-01-21; NVFP4: TRTLLM, CUTLASS under attention DP), the layout as
// launched (EP = TP where the 2025-11-02 scripts set it, whatever the source's columns said) and the client
// of its date; the FP4 rows resolve to the NVFP4 checkpoint's config, never the FP8 one.
TEST_CASE("issue 43: the TensorRT-LLM gpt-oss-120b and DeepSeek-V3 rows carry their launch flags",
          "[point_models]") {
  TestDir dir("point-models-trtcover");
  const std::string root = std::string(TOKENLINE_SOURCE_DIR) + "/calibrate";
  struct File {
    std::string gpu, path, models;
    size_t rows;
  };
  const std::vector<File> files = {
      {"h200", root + "/unseen/e2e-h200-trtllm-gpt-oss.csv", root + "/points/models", 95},
      {"h200", root + "/heldout/e2e-h200-trtllm-dsv3.csv", root + "/heldout/models", 15},
      {"b200", root + "/points/e2e-b200-trtllm-gptoss-dsv3.csv", root + "/points/models", 102},
      {"b200", root + "/points/e2e-b200-trtllm-nvfp4.csv", root + "/points/models", 44}};
  std::map<std::string, int> backends;  // "<gpu> <model> <backend>" -> rows
  for (const File& f : files) {
    CAPTURE(f.path);
    const std::vector<E2ePoint> rows = read_e2e_points(f.path);
    CHECK(rows.size() == f.rows);
    const PointModels models(rows, f.path, f.models, dir.path().string());
    for (const E2ePoint& p : rows) {
      CAPTURE(p.line);
      CHECK_NOTHROW(sim_arguments(p, "m.json", "out", SimPointOptions{}));
      CHECK(p.backend == "trtllm");
      CHECK(p.requests_per_client == 10);
      CHECK(p.length_range_ratio == 0.8);
      CHECK((p.warmup_per_client == 0 || p.warmup_per_client == 2));
      const int64_t gpus = int64_t(p.agg.tp) * p.agg.attention_dp;
      CHECK(int64_t(p.agg.moe_tp) * p.agg.moe_ep == gpus);  // never the source's tp_size 64
      CHECK(gpus <= 8);
      CHECK(option_value(p.sim_args, "--attention-dp-balance").empty() == (p.agg.attention_dp == 1));
      const ModelConfig m = load_hf_config(models.config_for(p));
      if (p.precision == "fp4" && p.model_path != "openai/gpt-oss-120b") {
        CHECK(p.model_path == "nvidia/DeepSeek-R1-NVFP4");
        CHECK(m.weights.quantized.kind == WeightFormatKind::kNvfp4);
      }
      if (p.model_path == "openai/gpt-oss-120b" && f.gpu == "h200") {
        CHECK(option_value(p.sim_args, "--kv-layout").empty());  // dtype auto: the checkpoint's BF16
        CHECK(option_value(p.sim_args, "--max-running") == std::to_string(p.concurrency));
      } else {
        CHECK(option_value(p.sim_args, "--kv-layout") == "fp8_e4m3");
      }
      if (p.model_path == "openai/gpt-oss-120b") CHECK(option_value(p.sim_args, "--chunk") == "20000");
      if (p.model_path == "deepseek-ai/DeepSeek-R1") CHECK(p.agg.moe_ep == 8);  // the scripts' EP_SIZE=$TP
      ++backends[f.gpu + " " + p.model_path + " " + option_value(p.sim_args, "--moe-backend")];
    }
  }
  CHECK(backends == std::map<std::string, int>{{"h200 openai/gpt-oss-120b TRITON", 95},
                                               {"h200 deepseek-ai/DeepSeek-R1 CUTLASS", 15},
                                               {"b200 openai/gpt-oss-120b TRTLLM", 84},
                                               {"b200 deepseek-ai/DeepSeek-R1 DEEPGEMM", 18},
                                               {"b200 nvidia/DeepSeek-R1-NVFP4 TRTLLM", 27},
                                               {"b200 nvidia/DeepSeek-R1-NVFP4 CUTLASS", 17}});
}
