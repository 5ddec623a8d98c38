// PointModels: the config.json each E2ePoint's model_path names, found in a models directory as
// <org>--<name>_config.json (aiconfigurator's model_configs naming). An instruct tune shares its base
// model's architecture, so "meta-llama/Llama-3.1-8B-Instruct" also finds "meta-llama--Meta-Llama-3.1-8B".
// When a point ran the model in FP8 (precision fp8) but the config.json holds unquantized weights, a copy
// with quantization_config {quant_method: fp8[, weight_block_size: [128, 128] for fp8_block]} is written
// under <out>/models/ and used instead, so the ledger prices the weights the deployment actually loaded. A
// config already quantized in another format (gpt-oss-120b's MXFP4 experts) is used as it is: the engine
// loads the checkpoint's own format, whatever the row's precision label says. A row whose precision is fp4,
// int4 or bf16 must resolve to a config of that format (an NVFP4 row to the NVFP4 checkpoint's config, not
// the BF16 base model's): otherwise the constructor throws InputError naming the row's line and `precision`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "calibrate/e2e_point.h"

namespace tokenline {

// The config.json path for model_path; throws InputError naming the point's line and the names tried.
std::string find_model_config(const E2ePoint& p, const std::string& points_path,
                              const std::string& models_dir);

// Short model name for tables: the part of model_path after the '/'.
std::string model_label(const std::string& model_path);

class PointModels {
 public:
  // Resolves and loads every point's model (loading validates it); writes FP8 copies under out_dir/models.
  PointModels(const std::vector<E2ePoint>& points, const std::string& points_path,
              const std::string& models_dir, const std::string& out_dir);
  // The config.json a run of `p` uses.
  const std::string& config_for(const E2ePoint& p) const;
  // The architecture of `p`'s model: equal for two model_paths whose configs have the same shape (DeepSeek-R1
  // and DeepSeek-V3), so that leaving one model out of a fit can leave out its twins too.
  const std::string& architecture_of(const E2ePoint& p) const;

 private:
  std::map<std::string, std::string> configs_;        // model_path + '|' + gemm_quant_mode -> config path
  std::map<std::string, std::string> architectures_;  // model_path -> architecture key
};

}  // namespace tokenline
