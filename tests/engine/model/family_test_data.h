// Shared by the family tests (families_test.cpp, families_latent_gemma4_test.cpp): the published config.json
// files under tests/engine/model/data/hf/, read as JSON by nlohmann (expected values come from the text, not
// from tokenline's reader), and a cost model of a config on 8 x H200.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cost/cost_model.h"
#include "engine/model/kv_layout.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "run/model_files.h"
#include "tests/traces/test_dir.h"
#include "topologies/hardware_loader.h"

namespace tokenline::family_test {

inline std::string hf(const std::string& name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/hf/" + name;
}

// A config.json as JSON (Python's Infinity read as transformers writes it); the text model's object.
inline nlohmann::json text_config(const std::string& name) {
  const nlohmann::json top = parse_checkpoint_json(testing::read_all(hf(name) + "/config.json"), name);
  return top.contains("text_config") && !top.contains("num_hidden_layers") ? top["text_config"] : top;
}

inline CostModel cm_of(const ModelConfig& m, const char* parallel) {
  return make_cost_model(m, parse_parallel(parallel, "test"), KvLayout::kBf16, load_hardware("h200"));
}

constexpr double kBf16Bytes = 2;

}  // namespace tokenline::family_test
