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
  std::string_view attention = "self_attn.";  // a layer's attention (and Mamba-2 mixer) modules
  std::string_view mlp = "mlp.";              // a dense layer's MLP
  // A latent MoE's two projections (hidden -> latent, latent -> hidden), after the layer's prefix; "": not a
  // module a quantization config applies to (held at the unquantized dtype).
  std::array<std::string_view, 2> latent_projs = {{"mixer.fc1_latent_proj", "mixer.fc2_latent_proj"}};
};

// A JSON document of a checkpoint's (config.json, hf_quant_config.json text): nesting bounded, Python's
// Infinity / NaN literals read as transformers writes them. InputError naming `path`: too deep or not JSON.
nlohmann::json parse_checkpoint_json(const std::string& text, const std::string& path);

// config: the text model's config object; wrapper: the file's top-level object (the same object when the
// file is not a wrapper); files: the checkpoint's texts (config_path names config.json in messages; an
// hf_quant_config.json beside it is read when quant_path is set).
// Throws InputError naming the field on an unknown method or format, listing what is supported.
WeightFormats read_weight_formats(const nlohmann::json& config, const nlohmann::json& wrapper,
                                  const CheckpointFiles& files, const ModelConfig& model,
                                  const ModuleNaming& naming);

}  // namespace tokenline
