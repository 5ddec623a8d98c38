#include "engine/model/hf_quant_config.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "run/model_files.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;

namespace {
std::string data(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/" + name;
}

// deepseek_v3.json's shape with the given quantization_config, in a scratch directory.
ModelConfig deepseek_with(const testing::TestDir& dir, const std::string& quant) {
  std::string body = testing::read_all(data("deepseek_v3.json"));
  const size_t at = body.find("\"quantization_config\"");
  if (at != std::string::npos) {
    const size_t comma = body.rfind(',', at);
    body.erase(comma, body.find('}', at) + 1 - comma);
  }
  body.insert(body.find('{') + 1, "\n  \"quantization_config\": " + quant + ",");
  std::ofstream(dir.file("config.json")) << body;
  return load_hf_config(dir.file("config.json"));
}
}  // namespace

TEST_CASE("compressed-tensors ignore: re: patterns match from the start, names exactly", "[hf_quant]") {
  const testing::TestDir dir("hf-quant-ct");
  const ModelConfig m =
      deepseek_with(dir, R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
    "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": null,
      "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": false}}},
    "ignore": ["lm_head", "re:.*self_attn\\.(q_a|q_b|kv_a)_proj.*", "model.layers.3.mlp.shared_experts.down_proj"]})");
  const WeightFormats& w = m.weights;
  CHECK(
      w.quantized ==
      WeightFormat{.kind = WeightFormatKind::kInt4, .group = 128, .zero_points = true, .weight_only = true});
  CHECK(w.share(WeightGroup::kRoutedExperts) == 1);
  CHECK(w.share(WeightGroup::kDenseMlp) == 1);
  // Only kv_b_proj and o_proj stay quantized (kv_a_proj_with_mqa matches re:...kv_a_proj).
  CHECK(w.share(WeightGroup::kAttention) > 0.5);
  CHECK(w.share(WeightGroup::kAttention) < 0.9);
  // One shared expert's down_proj of 58 MoE layers' three projections is excluded by its exact name.
  CHECK(w.share(WeightGroup::kSharedExperts) == Approx(1 - 1.0 / (3 * 58)));
  CHECK(w.share(WeightGroup::kRouter) == 0);
  CHECK(w.share(WeightGroup::kEmbed) == 0);
  CHECK(w.share(WeightGroup::kNorms) == 0);
}

TEST_CASE("ModelOpt exclude_modules are globs over the whole name, MTP layers matched by index",
          "[hf_quant]") {
  const testing::TestDir dir("hf-quant-modelopt");
  const ModelConfig m = deepseek_with(dir, R"({"quant_method": "modelopt", "quant_algo": "NVFP4",
    "group_size": 16, "exclude_modules": ["lm_head", "model.layers.*.self_attn*", "model.layers.61*"]})");
  CHECK(m.weights.quantized.kind == WeightFormatKind::kNvfp4);
  CHECK(m.weights.share(WeightGroup::kAttention) == 0);
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
  CHECK(m.weights.share(WeightGroup::kMtp) == 0);
  CHECK(m.weight_dtype == Dtype::kNvfp4);
  CHECK_THROWS_WITH(
      deepseek_with(dir, R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 32})"),
      Catch::Contains("quantization_config.group_size: expected 16"));
}

TEST_CASE("transformers' modules_to_not_convert: a module or what lies under it, never a longer name",
          "[hf_quant]") {
  const testing::TestDir dir("hf-quant-hf");
  // "mlp.gate" names the router; it must not take the experts' gate_proj with it.
  const ModelConfig m = deepseek_with(dir, R"({"quant_method": "fp8", "weight_block_size": [128, 128],
    "modules_to_not_convert": ["gate", "model.layers.0.mlp", "model.layers.*.self_attn.o_proj"]})");
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
  CHECK(m.weights.share(WeightGroup::kDenseMlp) == Approx(2.0 / 3));  // 3 dense layers, layer 0 excluded
  CHECK(m.weights.share(WeightGroup::kAttention) > 0.3);
  CHECK(m.weights.share(WeightGroup::kAttention) < 0.7);
  CHECK(weight_formats_summary(m).starts_with("fp8-block128 (attention"));
}

TEST_CASE("A malformed pattern or field type names its place in quantization_config", "[hf_quant]") {
  const testing::TestDir dir("hf-quant-bad");
  CHECK_THROWS_WITH(deepseek_with(dir, R"({"quant_method": "compressed-tensors", "config_groups": {"g":
      {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32}}},
      "ignore": ["re:(unclosed"]})"),
                    Catch::Contains("quantization_config.ignore: expected a valid pattern"));
  // (a*)* backtracks exponentially in std::regex: refused before it is compiled.
  CHECK_THROWS_WITH(deepseek_with(dir, R"({"quant_method": "fp8", "modules_to_not_convert": ["(a*)*b"]})"),
                    Catch::Contains("modules_to_not_convert: expected a pattern of at most 256 characters"));
  CHECK_THROWS_WITH(deepseek_with(dir, R"({"quant_method": "fp8", "modules_to_not_convert": "lm_head"})"),
                    Catch::Contains("quantization_config.modules_to_not_convert: expected a list"));
  CHECK_THROWS_WITH(deepseek_with(dir, R"({"quant_method": 8})"),
                    Catch::Contains("quantization_config.quant_method: expected one of fp8"));
}

TEST_CASE("A config kept as <name>_config.json reads <name>_hf_quant_config.json beside it", "[hf_quant]") {
  const testing::TestDir dir("hf-quant-named");
  const std::string hf = data("hf/deepseek-v3.1-nvfp4/");
  std::ofstream(dir.file("nvidia--DeepSeek-V3.1-NVFP4_config.json")) << testing::read_all(hf + "config.json");
  const ModelConfig alone = load_hf_config(dir.file("nvidia--DeepSeek-V3.1-NVFP4_config.json"));
  CHECK(alone.weights.source != "hf_quant_config.json");  // no companion file yet
  std::ofstream(dir.file("nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json"))
      << testing::read_all(hf + "hf_quant_config.json");
  const ModelConfig m = load_hf_config(dir.file("nvidia--DeepSeek-V3.1-NVFP4_config.json"));
  CHECK(m.weights.source == "hf_quant_config.json");
  CHECK(m.weights.quantized.kind == WeightFormatKind::kNvfp4);
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
}

// ModelOpt writes the KV format it calibrated beside the weights' (kv_cache_quant_algo, or null): read as
// written, for the engines whose "auto" takes it (TensorRT-LLM: cost/engine_behavior.h).
TEST_CASE("ModelOpt's kv_cache_quant_algo is read beside the weights' format", "[hf_quant]") {
  const testing::TestDir dir("hf-quant-kv");
  CHECK(
      deepseek_with(dir, R"({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"})")
          .weights.kv_cache_quant_algo == "FP8");
  CHECK(
      deepseek_with(dir, R"({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": null})")
          .weights.kv_cache_quant_algo.empty());
  CHECK(deepseek_with(dir, R"({"quant_method": "fp8", "weight_block_size": [128, 128]})")
            .weights.kv_cache_quant_algo.empty());
  CHECK_THROWS_WITH(
      deepseek_with(dir, R"({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": 8})"),
      Catch::Contains("quantization_config.kv_cache_quant_algo: expected a KV cache format name"));
  // hf_quant_config.json beside config.json (nvidia/DeepSeek-V3.1-NVFP4: FP8 KV).
  const ModelConfig m = load_hf_config(data("hf/deepseek-v3.1-nvfp4/config.json"));
  CHECK(m.weights.kv_cache_quant_algo == "FP8");
}
