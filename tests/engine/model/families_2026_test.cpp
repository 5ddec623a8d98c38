// The model configs published in 2026 that tokenline read wrongly or refused (GLM-5.2's IndexShare, ...):
// each checked against its published config.json under data/hf/ (SOURCE.md), the expected values taken from
// the file's text by nlohmann, not from tokenline's reader.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "cost/rank_work.h"
#include "cost/step_cost.h"
#include "engine/model/hf_quant_config.h"
#include "engine/model/linear_state.h"
#include "engine/model/model_config.h"
#include "tests/engine/model/family_test_data.h"

using namespace tokenline;
using namespace tokenline::family_test;
using nlohmann::json;

namespace {

// A published config.json (data/hf/<source>) with `edit` applied, written to a scratch directory.
std::string config_with(const testing::TestDir& dir, const char* source, const std::string& name,
                        void (*edit)(json&)) {
  json j = text_config(source);
  edit(j);
  const std::string path = dir.file(name + ".json");
  std::ofstream(path) << j.dump(2);
  return path;
}

std::string glm52_with(const testing::TestDir& dir, const std::string& name, void (*edit)(json&)) {
  return config_with(dir, "glm-5.2", name, edit);
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
      {{{"model_type", "nemotron-nas"}, {"block_configs", json::array()}}, "block_configs"},
  };
  for (const auto& [config, field] : cases) {
    const std::string path = dir.file(config["model_type"].get<std::string>() + ".json");
    std::ofstream(path) << config.dump();
    CHECK_THROWS_WITH(load_model(path), Catch::Contains(path + ": " + field + ": expected") &&
                                            Catch::Contains("is not modelled yet"));
  }
  // A list of one entry per layer is cut, the message one line.
  json nas = {{"model_type", "nemotron-nas"}, {"block_configs", json::array()}};
  for (int i = 0; i < 80; ++i) nas["block_configs"].push_back({{"attention", {{"n_heads_in_group", 8}}}});
  const std::string path = dir.file("nas-long.json");
  std::ofstream(path) << nas.dump();
  try {
    load_model(path);
    FAIL("not refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).size() < 400);
    CHECK_THAT(e.what(), Catch::EndsWith("..."));
  }
}

// DeepSeek-V4 (docs/layers.md "DeepSeek-V4"): each layer's compress ratio, the weights of the model cards,
// its KV per token and its compressors' state, computed here from the config text.
TEST_CASE("DeepSeek-V4 Pro and Flash load: a ratio per layer, the cards' parameters",
          "[hf_config][families][dsv4]") {
  for (const char* dir : {"deepseek-v4-pro", "deepseek-v4-flash"}) {
    INFO(dir);
    const json j = text_config(dir);
    const ModelConfig m = load_model(hf(dir));
    CHECK(m.attention == AttentionKind::kCompressed);
    const int layers = j["num_hidden_layers"];
    REQUIRE(m.compressed.ratios.size() == size_t(layers));
    for (int l = 0; l < layers; ++l)
      CHECK(m.compressed.ratios[size_t(l)] == j["compress_ratios"][l].get<int>());
    CHECK(m.compressed.mtp_ratio == j["compress_ratios"][layers].get<int>());
    CHECK(m.window_tokens == j["sliding_window"].get<int64_t>());
    CHECK(m.moe_layers() == layers);  // DeepSeek's MoE on every layer
    CHECK_FALSE(m.has_indexer());     // the CSA indexer is V4's own (compressed keys), not DSA's
  }
  // deepseek-ai's model cards: Pro 1.6T parameters (with its MTP layer), 49B activated; Flash 284B, 13B.
  const ModelConfig pro = load_model(hf("deepseek-v4-pro")), flash = load_model(hf("deepseek-v4-flash"));
  CHECK(count_params(pro).total() + count_params(pro).mtp == Approx(1.6e12).epsilon(0.01));
  CHECK(count_params(pro).active() == Approx(49e9).epsilon(0.03));
  CHECK(count_params(flash).total() == Approx(284e9).epsilon(0.01));
  CHECK(count_params(flash).active() == Approx(13e9).epsilon(0.07));
}

TEST_CASE("DeepSeek-V4's weights: FP8 blocks, FP4 experts (MXFP4, or NVFP4 in nvidia's copy), wo_a in BF16",
          "[hf_config][families][dsv4][weights]") {
  const ModelConfig m = load_model(hf("deepseek-v4-flash"));
  REQUIRE(m.weights.mixed);
  CHECK(m.weights.quantized_of(WeightGroup::kRoutedExperts).kind == WeightFormatKind::kMxfp4);
  CHECK(m.weights.quantized_of(WeightGroup::kAttention).kind == WeightFormatKind::kFp8Block);
  CHECK(group_bytes_per_param(m, WeightGroup::kRoutedExperts) == Approx(0.5 + 1.0 / 32));
  // The attention group holds wo_a (heads x head_dim x o_lora per layer) in BF16, the sinks and norms too.
  const json j = text_config("deepseek-v4-flash");
  const double wo_a = j["num_attention_heads"].get<double>() * j["head_dim"].get<double>() *
                      j["o_lora_rank"].get<double>() * j["num_hidden_layers"].get<double>();
  CHECK(m.weights.share(WeightGroup::kAttention) < 1 - 0.9 * wo_a / count_params(m).attention);
  const ModelConfig n = load_model(hf("deepseek-v4-flash-nvfp4"));
  CHECK(n.weights.quantized_of(WeightGroup::kRoutedExperts).kind == WeightFormatKind::kNvfp4);
  CHECK(n.weights.quantized_of(WeightGroup::kAttention).kind == WeightFormatKind::kFp8Block);
}

TEST_CASE("DeepSeek-V4's KV: a window on every layer, compressed entries per token, the compressors' state",
          "[families][dsv4][kv]") {
  const json j = text_config("deepseek-v4-pro");
  const ModelConfig m = load_model(hf("deepseek-v4-pro"));
  const CostModel cm =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8DsMla, load_hardware("b200"));
  // SGLang's FP8 entry: 448 FP8 NoPE dims, their UE8M0 scales (7, padded to 8 B), 64 BF16 RoPE dims.
  CHECK(cm.kv_bytes_token_layer == 448 + 8 + 64 * 2);
  int csa = 0, hca = 0, only_window = 0;
  const int layers = j["num_hidden_layers"];
  for (int l = 0; l < layers; ++l) {
    const int r = j["compress_ratios"][l];
    csa += r == 4, hca += r == 128, only_window += r == 0;
  }
  const double index_key = j["index_head_dim"].get<double>() + 4;  // FP8 keys and an FP32 scale
  CHECK(cm.compressed_kv_bytes_token == Approx(csa * (584 + index_key) / 4 + hca * 584.0 / 128));
  CHECK(cm.window_layers == layers);
  CHECK(cm.full_attention_layers == 0);
  // The FP32 KV and score state of what is not compressed yet, per compressed layer (twice over where CSA's
  // windows overlap) and for the CSA indexer's compressor; carried by the window pool per window token.
  const double hd = j["head_dim"], ihd = j["index_head_dim"];
  const double state = csa * (2 * 4 * 2 * hd * 4 + 2 * 4 * 2 * ihd * 4) + hca * (2 * 128 * hd * 4);
  CHECK(compressor_state_bytes(m) == int64_t(state));
  CHECK(cm.window_kv_bytes_token_layer ==
        584 + int64_t(std::ceil(state / (layers * j["sliding_window"].get<double>()))));
  CHECK(linear_state_bytes_per_request(m, 8) == 0);
}

TEST_CASE("DeepSeek-V4's decode reads the window, the top-k of the CSA entries and every HCA entry",
          "[families][dsv4][step_cost]") {
  const ModelConfig m = load_model(hf("deepseek-v4-flash"));
  const CostModel cm =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kFp8DsMla, load_hardware("b200"));
  const int64_t topk = m.compressed.index_topk;
  for (const int64_t c : {int64_t{1000}, 4 * topk + 100, int64_t{1} << 20}) {
    INFO(c);
    const SeqWork s{.new_tokens = 1, .context_tokens = c};
    const RankWork w = summarize(cm, std::span<const SeqWork>(&s, 1));
    CHECK(w.csa_idx_pairs == double((c + 1) / 4));
    CHECK(w.csa_attn_keys == double(std::min((c + 1) / 4, topk)));
    CHECK(w.hca_attn_keys == double((c + 1) / 128));
    CHECK(w.win_attn_keys == double(std::min<int64_t>(c + 1, m.window_tokens)));
  }
  // A long context reads the HCA entries and a capped CSA top-k: a 1M-token decode step is far below a
  // dense read of 1M keys per layer.
  const StepCost sc = decode_step(cm, 1, 1 << 20);
  CHECK(sc[Op::kSparseMla].kv_bytes < 43 * 584.0 * (1 << 20) * cm.parallel.tp / 20);
  CHECK(sc[Op::kWindowAttn].time_s > 0);
  CHECK(sc[Op::kIndexerScore].time_s > 0);
}

TEST_CASE("DeepSeek-V4's fields are checked, naming the field", "[hf_config][families][dsv4]") {
  testing::TestDir dir("families_2026_dsv4");
  auto with = [&](const char* name, void (*edit)(json&)) {
    return config_with(dir, "deepseek-v4-flash", name, edit);
  };
  CHECK_THROWS_WITH(load_model(with("ratio", [](json& j) { j["compress_ratios"][5] = 16; })),
                    Catch::Contains("compress_ratios[5]") && Catch::Contains("found 16"));
  CHECK_THROWS_WITH(load_model(with("short",
                                    [](json& j) {
                                      j["compress_ratios"].erase(0);
                                      j["compress_ratios"].erase(0);
                                    })),
                    Catch::Contains("compress_ratios") && Catch::Contains("42 entries"));
  CHECK_THROWS_WITH(load_model(with("groups", [](json& j) { j["o_groups"] = 7; })),
                    Catch::Contains("o_groups") && Catch::Contains("found 7"));
  CHECK_THROWS_WITH(load_model(with("kv", [](json& j) { j["num_key_value_heads"] = 8; })),
                    Catch::Contains("num_key_value_heads") && Catch::Contains("found 8"));
}

TEST_CASE("sgl-project's DeepSeek-V4 FP8 copies (model_type deepseek_ref) are known by their class",
          "[hf_config][families][dsv4]") {
  testing::TestDir dir("families_2026_dsv4_ref");
  const ModelConfig m = load_model(
      config_with(dir, "deepseek-v4-flash", "ref", [](json& j) { j["model_type"] = "deepseek_ref"; }));
  CHECK(m.attention == AttentionKind::kCompressed);
  CHECK(count_params(m).total() == count_params(load_model(hf("deepseek-v4-flash"))).total());
}
