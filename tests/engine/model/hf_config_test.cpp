#include <catch2/catch.hpp>
#include <string>

#include "common/input_error.h"
#include "engine/model/model_config.h"

using namespace tokenline;

namespace {
std::string data(const char* name) {
  return std::string(TOKENLINE_MODEL_TEST_DATA) + "/" + name;
}
}  // namespace

TEST_CASE("A glm_moe_dsa config.json loads to the glm-5.3 preset's constants", "[hf_config]") {
  const ModelConfig a = load_model(data("glm-5.3"));  // a directory holding config.json
  const ModelConfig b = model_preset("glm-5.3");
  CHECK(a.hf_model_type == "glm_moe_dsa");
  CHECK(a.layers == b.layers);
  CHECK(a.dense_layers == b.dense_layers);
  CHECK(a.hidden == b.hidden);
  CHECK(a.q_lora_rank == b.q_lora_rank);
  CHECK(a.kv_lora_rank == b.kv_lora_rank);
  CHECK(a.qk_nope_head_dim == b.qk_nope_head_dim);
  CHECK(a.v_head_dim == b.v_head_dim);
  CHECK(a.indexer_heads == b.indexer_heads);
  CHECK(a.indexer_topk == b.indexer_topk);
  CHECK(a.indexer_full_layers == 21);
  CHECK(a.weight_dtype == Dtype::kFp8);
  CHECK(a.default_kv_layout == KvLayout::kFp8DsMla);
  CHECK(count_params(a).total() == count_params(b).total());
}

TEST_CASE("deepseek_v3, deepseek_v32 and llama configs load", "[hf_config]") {
  const ModelConfig v3 = load_hf_config(data("deepseek_v3.json"));
  CHECK_FALSE(v3.has_indexer());
  CHECK(count_params(v3).total() == count_params(model_preset("deepseek-v3")).total());
  const ModelConfig v32 = load_hf_config(data("deepseek_v32.json"));
  CHECK(v32.indexer_full_layers == 61);  // no index_full_layers field: every layer scores
  const ModelConfig llama = load_hf_config(data("llama-3.1-8b.json"));
  CHECK(llama.attention == AttentionKind::kGqa);
  CHECK(llama.head_dim == 128);
  CHECK(llama.weight_dtype == Dtype::kBf16);
  CHECK(count_params(llama).total() == Approx(8.03e9).epsilon(0.005));
}

TEST_CASE("Malformed config.json files name the file and the field", "[hf_config]") {
  CHECK_THROWS_WITH(load_hf_config(data("truncated.json")),
                    Catch::Contains("truncated.json") && Catch::Contains("valid JSON"));
  CHECK_THROWS_WITH(load_hf_config(data("missing_field.json")),
                    Catch::Contains("missing_field.json: kv_lora_rank") && Catch::Contains("no such field"));
  CHECK_THROWS_WITH(load_hf_config(data("wrong_type.json")),
                    Catch::Contains("wrong_type.json: hidden_size") && Catch::Contains("\"4096\""));
  CHECK_THROWS_WITH(load_hf_config(data("unknown_type.json")),
                    Catch::Contains("model_type") && Catch::Contains("qwen3_moe"));
  CHECK_THROWS_WITH(load_hf_config(data("bad_experts.json")),
                    Catch::Contains("num_experts_per_tok") && Catch::Contains("300"));
  CHECK_THROWS_WITH(load_model(data("no_such_file.json")), Catch::Contains("no_such_file.json"));
}
