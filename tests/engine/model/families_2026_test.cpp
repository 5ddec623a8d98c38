// The model configs published in 2026 that tokenline read wrongly or refused (GLM-5.2's IndexShare, ...):
// each checked against its published config.json under data/hf/ (SOURCE.md), the expected values taken from
// the file's text by nlohmann, not from tokenline's reader.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "engine/model/hf_quant_config.h"
#include "engine/model/model_config.h"
#include "tests/engine/model/family_test_data.h"

using namespace tokenline;
using namespace tokenline::family_test;
using nlohmann::json;

namespace {

// The GLM-5.2 config.json with `edit` applied, written to a scratch directory (its own config.json).
std::string glm52_with(const testing::TestDir& dir, const std::string& name, void (*edit)(json&)) {
  json j = text_config("glm-5.2");
  edit(j);
  const std::string path = dir.file(name + ".json");
  std::ofstream(path) << j.dump(2);
  return path;
}

}  // namespace

TEST_CASE("GLM-5.2's indexer_types: 21 of its 78 layers score, at the layers the config names",
          "[hf_config][families]") {
  const json j = text_config("glm-5.2");
  const ModelConfig m = load_model(hf("glm-5.2"));
  REQUIRE(m.has_indexer());
  REQUIRE(m.layers == j["num_hidden_layers"].get<int>());
  int full = 0;
  for (size_t l = 0; l < j["indexer_types"].size(); ++l) {
    const bool want = j["indexer_types"][l] == "full";
    full += want ? 1 : 0;
    CHECK(m.indexer_full_layer(int(l)) == want);
  }
  CHECK(full == 21);
  CHECK(m.indexer_full_layers == full);
  CHECK(m.indexer_shared_layers() == 78 - 21);
  // Only the scoring layers carry indexer weights.
  const ModelConfig every = [&] {
    ModelConfig c = m;
    c.indexer_layer_full.clear();
    c.indexer_full_layers = c.layers;
    return c;
  }();
  CHECK(count_params(m).indexer == Approx(count_params(every).indexer * 21.0 / 78.0));
}

TEST_CASE("GLM-5.2's schedule from index_topk_freq / index_skip_topk_offset or index_topk_pattern alone",
          "[hf_config][families]") {
  testing::TestDir dir("families_2026_schedule");
  const json j = text_config("glm-5.2");
  // Without indexer_types: vLLM's rule, layer l shares when max(l - offset + 1, 0) % freq != 0.
  const ModelConfig by_freq =
      load_model(glm52_with(dir, "freq", [](json& c) { c.erase("indexer_types"); }));
  for (int l = 0; l < by_freq.layers; ++l) CHECK(by_freq.indexer_full_layer(l) == (j["indexer_types"][l] == "full"));
  CHECK(by_freq.indexer_full_layers == 21);
  const ModelConfig by_pattern = load_model(glm52_with(dir, "pattern", [](json& c) {
    std::string p;
    for (const json& t : c["indexer_types"]) p += t == "full" ? 'F' : 'S';
    c.erase("indexer_types");
    c["index_topk_pattern"] = p;
  }));
  CHECK(by_pattern.indexer_full_layers == 21);
  CHECK(by_pattern.indexer_full_layer(6));
  CHECK_FALSE(by_pattern.indexer_full_layer(7));
  // GLM-5 writes none of them: every layer scores.
  const ModelConfig none = load_model(glm52_with(dir, "none", [](json& c) {
    c.erase("indexer_types");
    c.erase("index_topk_freq");
    c.erase("index_skip_topk_offset");
  }));
  CHECK(none.indexer_full_layers == none.layers);
}

TEST_CASE("GLM-5.2's schedule fields are checked, naming the field", "[hf_config][families]") {
  testing::TestDir dir("families_2026_checks");
  CHECK_THROWS_WITH(load_model(glm52_with(dir, "short", [](json& c) { c["indexer_types"].erase(0); })),
                    Catch::Contains("indexer_types") && Catch::Contains("77 entries"));
  CHECK_THROWS_WITH(load_model(glm52_with(dir, "kind", [](json& c) { c["indexer_types"][5] = "skip"; })),
                    Catch::Contains("indexer_types[5]") && Catch::Contains("\"skip\""));
  CHECK_THROWS_WITH(load_model(glm52_with(dir, "first", [](json& c) { c["indexer_types"][0] = "shared"; })),
                    Catch::Contains("indexer_types[0]") && Catch::Contains("a shared first layer"));
  CHECK_THROWS_WITH(load_model(glm52_with(dir, "freq0",
                                          [](json& c) {
                                            c.erase("indexer_types");
                                            c["index_topk_freq"] = 0;
                                          })),
                    Catch::Contains("index_topk_freq") && Catch::Contains("found 0"));
}

TEST_CASE("GLM-5.2-NVFP4's layer_types name its DSA layers, which load as the model's own attention",
          "[hf_config][families]") {
  const json j = text_config("glm-5.2-nvfp4");
  REQUIRE(j["layer_types"][0] == "deepseek_sparse_attention");
  const ModelConfig m = load_model(hf("glm-5.2-nvfp4"));
  CHECK(m.full_attention_layers() == m.layers);
  CHECK(m.indexer_full_layers == 21);
  CHECK(m.weights.per_group);
}
