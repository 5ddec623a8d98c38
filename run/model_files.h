// Model files -> ModelConfig: the one place a model's config files are read from disk. engine/model parses
// the text (CheckpointFiles); this reads config.json and the hf_quant_config.json beside it, each bounded.
#pragma once

#include <string>

#include "engine/model/model_config.h"

namespace tokenline {

// config.json at `path`, and ModelOpt's hf_quant_config.json in the same directory when there is one (for
// a config kept as <name>_config.json, <name>_hf_quant_config.json first).
// InputError naming the file: unreadable ("a readable config.json"), too large (16 MiB each: a config is
// a few KB, an exclusion list a few MB), or a directory.
CheckpointFiles read_checkpoint_files(const std::string& path);

// parse_hf_model / parse_hf_config of the files at `path` (engine/model/model_config.h).
ModelConfig load_hf_config(const std::string& path);
HfModelRead read_hf_config(const std::string& path);

// A preset name, or else a path to a config.json (or a directory holding one). InputError on --model
// naming the presets when it is neither.
ModelConfig load_model(const std::string& name_or_path);
// The same with --weights-format applied (override_weight_format); "" keeps the checkpoint's formats.
ModelConfig load_model(const std::string& name_or_path, const std::string& weights_format);

}  // namespace tokenline
