#include "engine/model/model_config.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "run/model_files.h"

using namespace tokenline;

TEST_CASE("GLM-5.3's parameter counts derived from its config give 744B total and ~40B active",
          "[model_config]") {
  const ModelConfig glm = model_preset("glm-5.3");
  CHECK(glm.layers == 78);
  CHECK(glm.moe_layers() == 75);
  CHECK(glm.indexer_shared_layers() == 57);
  const ParamCounts p = count_params(glm);
  // The seed: "744B 总参数、40B 激活"; totals exclude the MTP layer, as model cards do.
  CHECK(p.total() == Approx(744e9).epsilon(0.005));
  CHECK(p.active() == Approx(40e9).epsilon(0.05));
  // "EP 把 724B 路由专家摊到 8 卡".
  CHECK(p.routed_experts == Approx(724e9).epsilon(0.005));
  // "如果 78 层全部独立打分, 索引器计算量会是现在的约 3.7 倍": 78 / 21.
  CHECK(double(glm.layers) / glm.indexer_full_layers == Approx(3.7).epsilon(0.01));
}

TEST_CASE("Other presets reproduce their model cards' parameter counts", "[model_config]") {
  CHECK(count_params(model_preset("deepseek-v3")).total() == Approx(671e9).epsilon(0.005));
  CHECK(count_params(model_preset("deepseek-v3")).active() == Approx(37e9).epsilon(0.03));
  CHECK(count_params(model_preset("llama-3.1-8b")).total() == Approx(8.03e9).epsilon(0.005));
  CHECK(count_params(model_preset("llama-3.1-70b")).total() == Approx(70.6e9).epsilon(0.005));
  for (const std::string& name : model_preset_names()) {
    CHECK_NOTHROW(validate_model(model_preset(name), name));
  }
}

TEST_CASE("Indexer full layers are spread over the stack, layer 0 first", "[model_config]") {
  const ModelConfig glm = model_preset("glm-5.3");
  int full = 0;
  for (int l = 0; l < glm.layers; ++l) full += glm.indexer_full_layer(l) ? 1 : 0;
  CHECK(full == 21);
  CHECK(glm.indexer_full_layer(0));
  CHECK_FALSE(glm.indexer_full_layer(1));
  const ModelConfig v32 = model_preset("deepseek-v3.2");
  for (int l = 0; l < v32.layers; ++l) CHECK(v32.indexer_full_layer(l));
}

TEST_CASE("glm-5.3-tiny keeps GLM-5.3's structure at tiny sizes", "[model_config]") {
  const ModelConfig t = model_preset("glm-5.3-tiny");
  CHECK(t.is_moe());
  CHECK(t.has_indexer());
  CHECK(t.dense_layers >= 1);
  CHECK(t.moe_layers() >= 1);
  CHECK(t.indexer_shared_layers() >= 1);
  CHECK(count_params(t).total() < 50e6);
}

TEST_CASE("Unknown model names list the presets", "[model_config]") {
  CHECK_THROWS_AS(model_preset("glm-6"), InputError);
  CHECK_THROWS_WITH(load_model("glm-6"), Catch::Contains("--model") && Catch::Contains("glm-5.3"));
}
