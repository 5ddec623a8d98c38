#include "calibrate/point_models.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/input_error.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFp8BlockEdge =
    128;  // aiconfigurator's fp8_block: 128x128-scaled weights (DeepGEMM's tile)

std::string key(const E2ePoint& p) {
  return p.model_path + "|" + p.gemm_quant_mode;
}

std::vector<std::string> candidate_names(const std::string& model_path) {
  const size_t slash = model_path.find('/');
  const std::string org = slash == std::string::npos ? "" : model_path.substr(0, slash);
  std::string name = slash == std::string::npos ? model_path : model_path.substr(slash + 1);
  const std::string prefix = org.empty() ? "" : org + "--";
  std::vector<std::string> names = {prefix + name + "_config.json"};
  const std::string instruct = "-Instruct";
  if (name.size() > instruct.size() && name.ends_with(instruct)) {
    name.resize(name.size() - instruct.size());
    names.push_back(prefix + name + "_config.json");
    if (org == "meta-llama") names.push_back(prefix + "Meta-" + name + "_config.json");
  }
  return names;
}

// A copy of `config` whose quantization_config says FP8 (block-scaled when the point says fp8_block).
std::string write_fp8_copy(const std::string& config, const E2ePoint& p, const std::string& out_dir) {
  std::ifstream in(config);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.str());
  nlohmann::ordered_json q = {{"quant_method", "fp8"}, {"fmt", "e4m3"}};
  if (p.gemm_quant_mode == "fp8_block") q["weight_block_size"] = {kFp8BlockEdge, kFp8BlockEdge};
  q["_source"] = "tokenline calibrate: the e2e point runs this model with precision fp8, gemm_quant_mode " +
                 p.gemm_quant_mode;
  j["quantization_config"] = q;
  const fs::path dir = fs::path(out_dir) / "models";
  fs::create_directories(dir);
  const std::string suffix = p.gemm_quant_mode.empty() ? "fp8" : p.gemm_quant_mode;
  const fs::path path = dir / (fs::path(config).stem().string() + "." + suffix + ".json");
  std::ofstream(path) << j.dump(2) << "\n";
  return path.string();
}

// True when the checkpoint stores its weights unquantized (BF16), the one case an FP8 row's weights are not
// the config's own. A checkpoint quantized in another format is served as it is: TensorRT-LLM loads an
// MXFP4 config (gpt-oss) as W4A16_MXFP4 below SM100 (tensorrt_llm/_torch/model_config.py
// get_mxfp4_quant_algo), and aiconfigurator's own estimate reads mxfp4 as BF16 GEMMs with w4a16_mxfp4 experts
// (sdk/models/helpers.py), whatever the row's precision label says.
bool unquantized(const ModelConfig& m) {
  return m.weight_dtype != Dtype::kFp8 && m.weights.quantized == m.weights.unquantized;
}

// The weights a row's `precision` says the run served, checked against the config it resolved to: a row
// measured on a 4-bit or BF16 checkpoint priced with another checkpoint's weights would be priced as the
// wrong deployment and still print a figure (issue 44: never BF16 by default). "fp8" is not checked here:
// an unquantized config gets its FP8 copy, another format is served as it is (unquantized() above); an
// empty or other label (aiconfigurator's Dynamo rows leave it empty) names nothing to check.
void check_precision(const E2ePoint& p, const ModelConfig& m, const std::string& config,
                     const std::string& points_path) {
  const WeightFormatKind kind = m.weights.quantized.kind;
  const bool fp4 = kind == WeightFormatKind::kNvfp4 || kind == WeightFormatKind::kMxfp4;
  const bool int4 = kind == WeightFormatKind::kInt4;
  const bool plain = unquantized(m);
  std::string expected;
  if (p.precision == "fp4" && !fp4)
    expected =
        "a config of the FP4 checkpoint the run served (NVFP4 or MXFP4 in quantization_config or "
        "hf_quant_config.json; model_path naming it, e.g. nvidia/<model>-NVFP4)";
  else if (p.precision == "int4" && !int4)
    expected = "a config of the INT4 checkpoint the run served (an INT4 weight-only quantization_config)";
  else if (p.precision == "bf16" && !plain)
    expected = "a config of the unquantized (BF16) checkpoint the run served";
  if (expected.empty()) return;
  throw InputError(points_path + ":" + std::to_string(p.line) + ": precision", expected,
                   p.precision + ", with " + fs::path(config).filename().string() + " holding " +
                       weight_format_name(m.weights.quantized) + " weights");
}

// The constants that make two configs the same network (weights' values and dtype aside).
std::string architecture_key(const ModelConfig& m) {
  std::string k = m.hf_model_type;
  for (int64_t v :
       {int64_t{m.layers}, int64_t{m.dense_layers}, m.hidden, int64_t{m.heads}, int64_t{m.kv_heads},
        m.head_dim, m.kv_lora_rank, m.q_lora_rank, int64_t{m.routed_experts}, int64_t{m.experts_per_token},
        int64_t{m.shared_experts}, m.moe_intermediate, m.dense_intermediate, m.vocab})
    k += "/" + std::to_string(v);
  return k;
}

}  // namespace

std::string find_model_config(const E2ePoint& p, const std::string& points_path,
                              const std::string& models_dir) {
  std::string tried;
  for (const std::string& name : candidate_names(p.model_path)) {
    const fs::path path = fs::path(models_dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return path.string();
    tried += (tried.empty() ? "" : " or ") + name;
  }
  throw InputError(points_path + ":" + std::to_string(p.line) + ": model_path", tried + " in " + models_dir,
                   "no such file for '" + p.model_path + "'");
}

std::string model_label(const std::string& model_path) {
  const size_t slash = model_path.find('/');
  return slash == std::string::npos ? model_path : model_path.substr(slash + 1);
}

PointModels::PointModels(const std::vector<E2ePoint>& points, const std::string& points_path,
                         const std::string& models_dir, const std::string& out_dir) {
  for (const E2ePoint& p : points) {
    if (configs_.count(key(p)) > 0) continue;
    const std::string config = find_model_config(p, points_path, models_dir);
    const ModelConfig model = load_hf_config(config);
    for (const E2ePoint& q : points) {
      if (key(q) == key(p)) check_precision(q, model, config, points_path);
    }
    architectures_[p.model_path] = architecture_key(model);
    const bool fp8_run = p.precision == "fp8" || p.gemm_quant_mode.starts_with("fp8");
    configs_[key(p)] = fp8_run && unquantized(model) ? write_fp8_copy(config, p, out_dir) : config;
  }
}

const std::string& PointModels::config_for(const E2ePoint& p) const {
  return configs_.at(key(p));
}

const std::string& PointModels::architecture_of(const E2ePoint& p) const {
  return architectures_.at(p.model_path);
}

}  // namespace tokenline
