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
  const ModelConfig by_freq = load_model(glm52_with(dir, "freq", [](json& c) { c.erase("indexer_types"); }));
  for (int l = 0; l < by_freq.layers; ++l)
    CHECK(by_freq.indexer_full_layer(l) == (j["indexer_types"][l] == "full"));
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

TEST_CASE("Qwen3-VL's text models load as the Qwen3 decoders they are, the vision tower left out",
          "[hf_config][families]") {
  // Qwen3-VL-235B-A22B's text model has Qwen3-235B-A22B's shape: the same fields, so the same parameters.
  const json vl = text_config("qwen3-vl-235b-a22b");
  const json base = parse_checkpoint_json(
      testing::read_all(std::string(TOKENLINE_MODEL_TEST_DATA) + "/qwen3-235b-a22b-fp8.json"), "qwen3-235b");
  for (const char* f :
       {"num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
        "num_experts", "num_experts_per_tok", "moe_intermediate_size", "vocab_size"})
    REQUIRE(vl[f] == base[f]);
  const ModelConfig m = load_model(hf("qwen3-vl-235b-a22b"));
  CHECK(m.hf_model_type == "qwen3_vl_moe_text");
  CHECK(m.qk_norm);
  CHECK(m.routed_experts == vl["num_experts"].get<int>());
  CHECK(m.moe_layers() == m.layers);
  CHECK(m.left_out.find("vision_config") != std::string::npos);
  const ModelConfig q = load_hf_config(std::string(TOKENLINE_MODEL_TEST_DATA) + "/qwen3-235b-a22b-fp8.json");
  CHECK(count_params(m).total() == Approx(count_params(q).total()));
  CHECK(count_params(m).active() == Approx(count_params(q).active()));
  // The dense 8B: 36 layers of Qwen3 GQA; its parameters from the config's own sizes.
  const json d = text_config("qwen3-vl-8b");
  const ModelConfig e = load_model(hf("qwen3-vl-8b"));
  CHECK(e.hf_model_type == "qwen3_vl_text");
  CHECK_FALSE(e.is_moe());
  const double h = d["hidden_size"], hd = d["head_dim"], kv = d["num_key_value_heads"],
               qh = d["num_attention_heads"];
  const double per_layer = h * hd * (qh + 2 * kv) + qh * hd * h +
                           3 * h * d["intermediate_size"].get<double>() + 2 * h +
                           2 * hd;  // q/k/v, o, gate/up/down; two RMSNorms, q/k norms
  const double embed = h * d["vocab_size"].get<double>();
  const double want =
      per_layer * d["num_hidden_layers"].get<double>() + h + embed * (e.tie_embeddings ? 1 : 2);
  CHECK(count_params(e).total() == Approx(want).epsilon(0.001));
}

TEST_CASE("Nemotron 3 Ultra and 3.5 Lightning's layers_block_type spells their blocks",
          "[hf_config][families]") {
  for (const char* dir : {"nemotron-3-ultra-550b-a55b-fp8", "nemotron-3.5-lightning-30b-a3b-nvfp4"}) {
    INFO(dir);
    const json j = text_config(dir);
    const ModelConfig m = load_model(hf(dir));
    const json& blocks = j["layers_block_type"];
    REQUIRE(m.layers == int(blocks.size()));  // Ultra writes no num_hidden_layers
    for (size_t i = 0; i < blocks.size(); ++i) {
      const std::string b = blocks[i];
      CHECK(m.mixers[i] == (b == "mamba"       ? MixerKind::kMamba2
                            : b == "attention" ? MixerKind::kAttention
                                               : MixerKind::kNone));
      CHECK(m.ffns[i] == (b == "moe" ? FfnKind::kMoe : b == "mlp" ? FfnKind::kDense : FfnKind::kNone));
    }
    CHECK(m.mtp_layers ==
          j["num_nextn_predict_layers"].get<int>());  // mtp_layers_block_type ["attention", "moe"]
  }
  // The model card's sizes: 550B parameters, 55B active a token (MTP left out).
  const ModelConfig ultra = load_model(hf("nemotron-3-ultra-550b-a55b-fp8"));
  CHECK(count_params(ultra).total() == Approx(550e9).epsilon(0.03));
  CHECK(count_params(ultra).active() == Approx(55e9).epsilon(0.05));
}

TEST_CASE("A layers_block_type entry tokenline has no block for is refused, naming it",
          "[hf_config][families]") {
  testing::TestDir dir("families_2026_nemotron");
  json j = text_config("nemotron-3.5-lightning-30b-a3b-nvfp4");
  j["layers_block_type"][4] = "gdn";
  const std::string path = dir.file("bad.json");
  std::ofstream(path) << j.dump();
  CHECK_THROWS_WITH(load_model(path), Catch::Contains("layers_block_type[4]") && Catch::Contains("\"gdn\""));
  j = text_config("nemotron-3.5-lightning-30b-a3b-nvfp4");
  j["mtp_layers_block_type"] = {"mamba"};
  std::ofstream(path) << j.dump();
  CHECK_THROWS_WITH(load_model(path), Catch::Contains("mtp_layers_block_type"));
}

TEST_CASE("ModelOpt's MIXED_PRECISION: each module in the format quantized_layers names for it",
          "[hf_config][families][weights]") {
  const json q = text_config("qwen3.6-35b-a3b-nvfp4");
  const json top =
      parse_checkpoint_json(testing::read_all(hf("qwen3.6-35b-a3b-nvfp4") + "/config.json"), "qwen3.6");
  const json& layers = top["quantization_config"]["quantized_layers"];
  REQUIRE(top["quantization_config"]["quant_algo"] == "MIXED_PRECISION");
  REQUIRE(layers["model.language_model.layers.0.mlp.experts"]["quant_algo"] == "W4A16_NVFP4");
  REQUIRE(layers["model.language_model.layers.3.self_attn.q_proj"]["quant_algo"] == "FP8");
  const ModelConfig m = load_model(hf("qwen3.6-35b-a3b-nvfp4"));
  REQUIRE(m.weights.mixed);
  // Experts: E2M1 weights and an E4M3 scale per 16 (0.5 + 1/16 bytes), BF16 activations.
  const WeightFormat& experts = m.weights.quantized_of(WeightGroup::kRoutedExperts);
  CHECK(experts.kind == WeightFormatKind::kNvfp4);
  CHECK(experts.weight_only);
  CHECK(group_bytes_per_param(m, WeightGroup::kRoutedExperts) == Approx(0.5 + 1.0 / 16));
  CHECK(group_bytes_per_param(m, WeightGroup::kSharedExperts) == Approx(0.5 + 1.0 / 16));
  CHECK(m.weights.quantized == experts);  // most of the quantized parameters
  // Attention: q/k/v/o and the GDN projections in FP8, but the GDN's in_proj_a / in_proj_b, which
  // quantized_layers does not name, in BF16: a hidden x value_heads matrix each per linear layer.
  CHECK(m.weights.quantized_of(WeightGroup::kAttention).kind == WeightFormatKind::kFp8PerTensor);
  const double h = q["hidden_size"], vh = q["linear_num_value_heads"];
  const double ab = 2 * h * vh * double(m.mixer_layers(MixerKind::kGatedDeltaNet));
  const double attn = count_params(m).attention;
  CHECK(m.weights.share(WeightGroup::kAttention) < 1);
  CHECK(group_bytes_per_param(m, WeightGroup::kAttention) ==
        Approx(((attn - ab) * 1 + ab * 2) / attn).epsilon(0.002));
  CHECK(group_bytes_per_param(m, WeightGroup::kRouter) == 2);
  CHECK(weight_gemm_peak_flops(experts, load_hardware("b200")) == load_hardware("b200").peak_flops_bf16);
}

TEST_CASE("ModelOpt's quantization_config without quant_method, and a MIXED_PRECISION format it lacks",
          "[hf_config][families][weights]") {
  const ModelConfig s = load_model(hf("qwen3-32b-fp8-static"));  // quant_algo FP8, producer modelopt
  CHECK(s.weights.quantized.kind == WeightFormatKind::kFp8PerTensor);
  CHECK(s.weights.share(WeightGroup::kDenseMlp) == 1);
  CHECK(s.weights.share(WeightGroup::kLmHead) == 0);
  testing::TestDir dir("families_2026_modelopt");
  json top =
      parse_checkpoint_json(testing::read_all(hf("qwen3.6-35b-a3b-nvfp4") + "/config.json"), "qwen3.6");
  top["quantization_config"]["quantized_layers"]["model.language_model.layers.2.mlp.experts"]["quant_algo"] =
      "W4A8_AWQ";
  const std::string path = dir.file("bad.json");
  std::ofstream(path) << top.dump();
  CHECK_THROWS_WITH(load_model(path),
                    Catch::Contains("quantized_layers.model.language_model.layers.2.mlp.experts") &&
                        Catch::Contains("'W4A8_AWQ'") && Catch::Contains("MIXED_PRECISION"));
}

TEST_CASE("2026 families whose layers tokenline does not model are refused naming the field that asks for it",
          "[hf_config][families]") {
  testing::TestDir dir("families_2026_refused");
  const std::pair<json, std::string> cases[] = {
      {{{"model_type", "deepseek_v4"}, {"compress_ratios", json::array({128, 128, 4, 0})}},
       "compress_ratios"},
      {{{"model_type", "minimax_m3"}, {"sparse_attention_config", {{"sparse_block_size", 128}}}},
       "sparse_attention_config"},
      {{{"model_type", "minimax_m3_vl"}, {"text_config", {{"sparse_attention_config", json::object()}}}},
       "text_config.sparse_attention_config"},
      {{{"model_type", "mimo_v2_flash"}, {"swa_num_attention_heads", 64}}, "swa_num_attention_heads"},
      {{{"model_type", "nemotron-nas"}, {"block_configs", json::array()}}, "block_configs"},
      // sgl-project/DeepSeek-V4-Flash-FP8 names another model_type; its class says what it is.
      {{{"model_type", "deepseek_ref"},
        {"architectures", {"DeepseekV4ForCausalLM"}},
        {"compress_ratios", {4}}},
       "compress_ratios"},
  };
  for (const auto& [config, field] : cases) {
    const std::string path = dir.file(config["model_type"].get<std::string>() + ".json");
    std::ofstream(path) << config.dump();
    CHECK_THROWS_WITH(load_model(path), Catch::Contains(path + ": " + field + ": expected") &&
                                            Catch::Contains("is not modelled yet"));
  }
  // A list of one entry per layer is cut, the message one line.
  json v4 = {{"model_type", "deepseek_v4"}, {"compress_ratios", json::array()}};
  for (int i = 0; i < 61; ++i) v4["compress_ratios"].push_back(i % 2 ? 4 : 128);
  const std::string path = dir.file("v4-long.json");
  std::ofstream(path) << v4.dump();
  try {
    load_model(path);
    FAIL("not refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).size() < 400);
    CHECK_THAT(e.what(), Catch::EndsWith("..."));
  }
}
