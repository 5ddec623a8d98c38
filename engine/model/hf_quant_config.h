// A checkpoint's weight formats from its quantization_config (config.json) or hf_quant_config.json
// (ModelOpt's file beside it). Private to engine/model: hf_config.cpp calls it once the network's shape is
// read, since which modules a config excludes is decided per module name and weighed by parameters.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "engine/model/model_config.h"

namespace tokenline {

// How a family names its modules under model.layers.N. (transformers' names, which exclusion lists use).
struct ModuleNaming {
  std::string_view layers = "model.layers.";  // a decoder layer's prefix, before its index
  std::string_view mtp =
      "";  // an MTP layer's prefix before its index; "": layers, after the last decoder layer
  std::string_view experts = "mlp.experts.0.";  // one routed expert (lists never single experts out)
  // An expert's projections and the share of its parameters each holds.
  std::array<std::pair<std::string_view, double>, 3> expert_projs = {
      {{"gate_proj", 1.0 / 3}, {"up_proj", 1.0 / 3}, {"down_proj", 1.0 / 3}}};
  std::string_view shared = "mlp.shared_experts.";
};

// config: the text model's config object; wrapper: the file's top-level object (the same object when the
// file is not a wrapper); config_path: the file read, whose directory may hold hf_quant_config.json.
// Throws InputError naming the field on an unknown method or format, listing what is supported.
// A JSON document read from a checkpoint's file (config.json, hf_quant_config.json): at most max_bytes (a
// stream stops there), nesting bounded, Python's Infinity / NaN literals read as transformers writes them.
// InputError naming the file: unreadable ("a readable <what>"), too large, too deep or not JSON.
nlohmann::json read_checkpoint_json(const std::string& path, int64_t max_bytes, const std::string& what);

WeightFormats read_weight_formats(const nlohmann::json& config, const nlohmann::json& wrapper,
                                  const std::string& config_path, const ModelConfig& model,
                                  const ModuleNaming& naming);

}  // namespace tokenline
