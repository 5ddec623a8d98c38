// Issue 44 (items 1 and 6): the window, chunked and Mamba-2 hybrid families read from their published
// config.json files, the presets made from them, and the refusals of what they need that tokenline lacks.
// Expected values are derived in each test from the config text (nlohmann reads it here) and the module
// shapes of the transformers classes, not from tokenline's reader.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/input_error.h"
#include "cost/memory.h"
#include "cost/step_cost.h"
#include "engine/model/hf_quant_config.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "tests/engine/model/family_test_data.h"
#include "tests/traces/test_dir.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;
using nlohmann::json;

namespace {

using family_test::cm_of;
using family_test::hf;
using family_test::kBf16Bytes;
using family_test::text_config;

}  // namespace

TEST_CASE("issue 44: gemma3 27B loads 62 layers, five of every six sliding over 1024 tokens",
          "[hf_config][families]") {
  const json t = text_config("gemma-3-27b-it");
  // The file says 62 layers and a 1024-token window, and leaves sliding_window_pattern to Gemma3TextConfig's
  // default 6: layer i is global when (i + 1) % 6 == 0, so layers 5, 11, ..., 59 (10 of them) are global.
  const int layers = t["num_hidden_layers"];
  REQUIRE(layers == 62);
  const ModelConfig m = load_model(hf("gemma-3-27b-it"));
  CHECK(m.hf_model_type == "gemma3_text");
  CHECK(m.layers == layers);
  CHECK(m.window_tokens == t["sliding_window"].get<int64_t>());
  REQUIRE(m.mixers.size() == size_t(layers));
  for (int i = 0; i < layers; ++i)
    CHECK(m.mixers[size_t(i)] == ((i + 1) % 6 == 0 ? MixerKind::kAttention : MixerKind::kSlidingWindow));
  CHECK(m.window_layers() == 52);
  CHECK(m.full_attention_layers() == 10);
  CHECK_FALSE(m.chunked_attention());
  CHECK(m.head_dim == t["head_dim"].get<int64_t>());  // 128: q (32 x 128) is narrower than hidden 5376
  CHECK(m.kv_heads == t["num_key_value_heads"].get<int>());
  CHECK(m.dense_intermediate == t["intermediate_size"].get<int64_t>());
  CHECK(m.tie_embeddings);   // Gemma3TextConfig's default
  CHECK(m.vocab == 262208);  // Gemma3TextConfig's default: the file does not say it
  CHECK(m.max_context_tokens == 131072);
  CHECK(m.left_out.find("vision_config") != std::string::npos);  // said, and left out
  CHECK_FALSE(m.is_moe());
}

TEST_CASE("issue 44: gemma3's layer_types, where written, overrides the pattern, bad kinds are refused",
          "[hf_config][families]") {
  const testing::TestDir dir("hf-gemma3");
  const std::string path = dir.file("config.json");
  std::ofstream(path) << R"({"model_type": "gemma3_text", "num_hidden_layers": 4, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": 512,
      "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention"]})";
  const ModelConfig m = load_hf_config(path);
  CHECK(m.mixers == std::vector<MixerKind>{MixerKind::kAttention, MixerKind::kSlidingWindow,
                                           MixerKind::kSlidingWindow, MixerKind::kAttention});
  std::ofstream(path) << R"({"model_type": "gemma3_text", "num_hidden_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": 512,
      "layer_types": ["full_attention", "chunked_attention"]})";
  CHECK_THROWS_WITH(load_hf_config(path), Catch::Contains("layer_types[1]") && Catch::Contains("chunked"));
  std::ofstream(path) << R"({"model_type": "gemma3_text", "num_hidden_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": 512,
      "sliding_window_pattern": 0})";
  CHECK_THROWS_WITH(load_hf_config(path), Catch::Contains("sliding_window_pattern"));
}

TEST_CASE("issue 44: gemma4 without its extra mechanisms reads as Gemma 3's layers",
          "[hf_config][families]") {
  // Gemma 4's global head width, KV heads, keys as values and MoE block: families_latent_gemma4_test.cpp.
  const testing::TestDir dir("hf-gemma4");
  const std::string path = dir.file("config.json");
  std::ofstream(path) << R"({"model_type": "gemma4_text", "num_hidden_layers": 6, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "global_head_dim": 64,
      "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": 512,
      "attention_k_eq_v": false, "num_kv_shared_layers": 0, "enable_moe_block": false})";
  const ModelConfig m = load_hf_config(path);
  CHECK(m.window_layers() == 5);
  CHECK(m.full_attention_layers() == 1);
  CHECK_FALSE(m.full_layer_shape_differs());
  std::ofstream(path) << R"({"model_type": "gemma4_text", "num_hidden_layers": 6, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "num_kv_shared_layers": 2,
      "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": 512})";
  CHECK_THROWS_WITH(load_hf_config(path),
                    Catch::Contains("num_kv_shared_layers") && Catch::Contains("found 2"));
}

TEST_CASE("issue 44: Llama-4-Scout loads chunked layers (3 of 4), MoE on every layer, a shared expert",
          "[hf_config][families]") {
  const json t = text_config("llama-4-scout");
  const int layers = t["num_hidden_layers"];
  const ModelConfig m = load_model(hf("llama-4-scout"));
  CHECK(m.hf_model_type == "llama4_text");
  CHECK(m.layers == layers);
  // No no_rope_layers in the file: Llama4TextConfig makes every 4th layer NoPE (full), the others chunked.
  REQUIRE(m.mixers.size() == size_t(layers));
  for (int i = 0; i < layers; ++i)
    CHECK(m.mixers[size_t(i)] == ((i + 1) % 4 == 0 ? MixerKind::kAttention : MixerKind::kChunkedAttention));
  CHECK(m.chunked_attention());
  CHECK(m.window_tokens == t["attention_chunk_size"].get<int64_t>());
  // interleave_moe_layer_step 1: moe_layers = range(0, 48, 1), every layer.
  REQUIRE(t["interleave_moe_layer_step"] == 1);
  CHECK(m.moe_layers() == layers);
  CHECK(m.mlp_dense_layers() == 0);
  CHECK(m.routed_experts == t["num_local_experts"].get<int>());
  CHECK(m.experts_per_token == 1);
  CHECK(m.shared_experts == 1);
  CHECK_FALSE(m.router_score_bias);
  CHECK(m.moe_intermediate == t["intermediate_size"].get<int64_t>());
  CHECK(m.dense_intermediate == t["intermediate_size_mlp"].get<int64_t>());
}

TEST_CASE("issue 44: llama4 interleaved MoE (Maverick's step 2) and no_rope_layers set the per-layer kinds",
          "[hf_config][families]") {
  const testing::TestDir dir("hf-llama4");
  const std::string path = dir.file("config.json");
  std::ofstream(path) << R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text",
      "num_hidden_layers": 6, "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 64, "intermediate_size": 128, "intermediate_size_mlp": 512, "vocab_size": 1000,
      "max_position_embeddings": 65536, "num_local_experts": 8, "num_experts_per_tok": 1,
      "interleave_moe_layer_step": 2, "attention_chunk_size": 1024, "no_rope_layers": [1, 0, 1, 1, 0, 1]},
      "vision_config": {"model_type": "llama4_vision_model"}})";
  const ModelConfig m = load_hf_config(path);
  // moe_layers = range(step - 1, 6, step) = 1, 3, 5.
  CHECK(m.ffns == std::vector<FfnKind>{FfnKind::kDense, FfnKind::kMoe, FfnKind::kDense, FfnKind::kMoe,
                                       FfnKind::kDense, FfnKind::kMoe});
  CHECK(m.dense_layers == 3);
  CHECK(m.mixers == std::vector<MixerKind>{MixerKind::kChunkedAttention, MixerKind::kAttention,
                                           MixerKind::kChunkedAttention, MixerKind::kChunkedAttention,
                                           MixerKind::kAttention, MixerKind::kChunkedAttention});
  // Parameters: 3 dense MLPs of 512 and 3 MoE layers of 8 + 1 shared experts of 128 (gated: 3 matrices).
  const ParamCounts p = count_params(m);
  CHECK(p.dense_mlp == Approx(3.0 * 3 * 256 * 512));
  CHECK(p.routed_experts == Approx(3.0 * 8 * 3 * 256 * 128));
  CHECK(p.shared_experts == Approx(3.0 * 1 * 3 * 256 * 128));
  CHECK(m.left_out.find("vision_config") != std::string::npos);
  std::string body = testing::read_all(path);
  body.replace(body.find("\"interleave_moe_layer_step\": 2"), 30, "\"moe_layers\": [0, 9]           ");
  std::ofstream(path) << body;
  CHECK_THROWS_WITH(load_hf_config(path), Catch::Contains("text_config.moe_layers") && Catch::Contains("9"));
}

TEST_CASE("issue 44: Nemotron-3-Nano's hybrid_override_pattern makes one mixer or one FFN per block",
          "[hf_config][families]") {
  const json t = text_config("nemotron-3-nano-30b-a3b");  // its time_step_limit holds Infinity
  const std::string pattern = t["hybrid_override_pattern"];
  const int layers = t["num_hidden_layers"];
  REQUIRE(pattern.size() == size_t(layers));
  const ModelConfig m = load_model(hf("nemotron-3-nano-30b-a3b"));
  CHECK(m.hf_model_type == "nemotron_h");
  REQUIRE(m.mixers.size() == size_t(layers));
  REQUIRE(m.ffns.size() == size_t(layers));
  int mamba = 0, attention = 0, moe = 0;
  for (int i = 0; i < layers; ++i) {
    const char b = pattern[size_t(i)];
    mamba += b == 'M';
    attention += b == '*';
    moe += b == 'E';
    CHECK(m.mixers[size_t(i)] == (b == 'M'   ? MixerKind::kMamba2
                                  : b == '*' ? MixerKind::kAttention
                                             : MixerKind::kNone));
    CHECK(m.ffns[size_t(i)] == (b == 'E' ? FfnKind::kMoe : b == '-' ? FfnKind::kDense : FfnKind::kNone));
  }
  CHECK(mamba == 23);
  CHECK(attention == 6);
  CHECK(moe == 23);
  CHECK(m.mixer_layers(MixerKind::kMamba2) == mamba);
  CHECK(m.attention_layers() == attention);
  CHECK(m.moe_layers() == moe);
  CHECK(m.mlp_dense_layers() == 0);
  CHECK(m.block_norms() == layers);  // one norm per block
  CHECK(m.mlp_projections == 2);     // squared ReLU: up, down
  CHECK(m.mamba.heads == t["mamba_num_heads"].get<int>());
  CHECK(m.mamba.groups == t["n_groups"].get<int>());
  CHECK(m.mamba.state_size == t["ssm_state_size"].get<int64_t>());
  // The shared expert is 3712 wide, two routed experts' 1856.
  CHECK(m.shared_experts * m.moe_intermediate == t["moe_shared_expert_intermediate_size"].get<int64_t>());
}

TEST_CASE("issue 44: Nemotron-H-56B's dense MLP blocks ('-') load beside Mamba-2 and attention",
          "[hf_config][families]") {
  const json t = text_config("nemotron-h-56b");
  const std::string pattern = t["hybrid_override_pattern"];
  const ModelConfig m = load_model(hf("nemotron-h-56b"));
  const int dense = int(std::count(pattern.begin(), pattern.end(), '-'));
  CHECK(m.mlp_dense_layers() == dense);
  CHECK(m.dense_layers == dense);
  CHECK(m.moe_layers() == 0);
  CHECK(m.attention_layers() == int(std::count(pattern.begin(), pattern.end(), '*')));
  CHECK(m.head_dim == t["attention_head_dim"].get<int64_t>());
  // NVIDIA's model card: 56B parameters.
  CHECK(count_params(m).total() == Approx(56e9).epsilon(0.03));
}

TEST_CASE("issue 44: refusals name the field: a bad block letter, a pattern of the wrong length",
          "[hf_config][families]") {
  const testing::TestDir dir("hf-nemotron");
  std::string body = testing::read_all(hf("nemotron-3-nano-30b-a3b") + "/config.json");
  const std::string pattern = "\"MEMEM*EMEMEM*";
  const std::string path = dir.file("config.json");
  std::string bad = body;
  bad.replace(bad.find(pattern), pattern.size(), "\"MEMEM*EMEMEMX");
  std::ofstream(path) << bad;
  CHECK_THROWS_WITH(load_hf_config(path),
                    Catch::Contains("hybrid_override_pattern[12]") && Catch::Contains("'X'"));
  bad = body;
  bad.replace(bad.find(pattern), pattern.size(), "\"MEMEM*EMEMEM");
  std::ofstream(path) << bad;
  CHECK_THROWS_WITH(load_hf_config(path),
                    Catch::Contains("hybrid_override_pattern") && Catch::Contains("found 51 characters"));
  bad = body;
  const std::string experts = "\"n_routed_experts\": 128";
  bad.replace(bad.find(experts), experts.size(), "\"n_routed_experts\": 0");
  std::ofstream(path) << bad;
  CHECK_THROWS_WITH(load_hf_config(path), Catch::Contains("n_routed_experts") && Catch::Contains("found 0"));
  bad = body;
  const std::string shared = "\"moe_shared_expert_intermediate_size\": 3712";
  bad.replace(bad.find(shared), shared.size(), "\"moe_shared_expert_intermediate_size\": 3000");
  std::ofstream(path) << bad;
  CHECK_THROWS_WITH(load_hf_config(path),
                    Catch::Contains("moe_shared_expert_intermediate_size") && Catch::Contains("found 3000"));
}

TEST_CASE("issue 44: the new presets are their config files, read by the same rules",
          "[model_config][families]") {
  for (const auto& [preset, dir] :
       {std::pair{"kimi-k2.5", "kimi-k2.5"}, std::pair{"minimax-m2.5", "minimax-m2.5"},
        std::pair{"minimax-m3", "minimax-m3"}, std::pair{"llama-4-scout", "llama-4-scout"},
        std::pair{"nemotron-3-nano-30b-a3b", "nemotron-3-nano-30b-a3b"},
        std::pair{"nemotron-3-super-120b-a12b-fp8", "nemotron-3-super-120b-a12b-fp8"},
        std::pair{"gemma-3-27b", "gemma-3-27b-it"}, std::pair{"gemma-4-26b-a4b", "gemma-4-26b-a4b"},
        std::pair{"deepseek-v4-pro", "deepseek-v4-pro"},
        std::pair{"deepseek-v4-flash", "deepseek-v4-flash"}}) {
    INFO(preset);
    const ModelConfig p = model_preset(preset);
    const ModelConfig f = load_model(hf(dir));
    CHECK(p.name == preset);
    CHECK(p.hf_model_type == f.hf_model_type);
    CHECK(p.layers == f.layers);
    CHECK(p.mixers == f.mixers);
    CHECK(p.ffns == f.ffns);
    CHECK(p.window_tokens == f.window_tokens);
    CHECK(p.compressed.ratios == f.compressed.ratios);
    CHECK(p.compressed.mtp_ratio == f.compressed.mtp_ratio);
    CHECK(p.left_out == f.left_out);
    CHECK(count_params(p).total() == count_params(f).total());
    CHECK(weight_bytes_per_gpu(cm_of(p, "tp8")).total() ==
          Approx(weight_bytes_per_gpu(cm_of(f, "tp8")).total()));
    CHECK_NOTHROW(validate_model(p, preset));
  }
}

TEST_CASE("issue 44: Llama-4-Scout BF16 weights per GPU match the checkpoint's tensors",
          "[memory][weights][families]") {
  const json t = text_config("llama-4-scout");
  const double h = t["hidden_size"], v = t["vocab_size"], L = t["num_hidden_layers"];
  const double q = double(t["num_attention_heads"]) * double(t["head_dim"]);
  const double kv = double(t["num_key_value_heads"]) * double(t["head_dim"]);
  const double E = t["num_local_experts"], inter = t["intermediate_size"];
  // transformers' Llama4TextDecoderLayer (every layer MoE at step 1): q/k/v/o_proj; feed_forward.router
  // [E, h]; experts.gate_up_proj [E, h, 2 inter], experts.down_proj [E, inter, h]; shared_expert gate/up/down
  // [inter, h]; input_layernorm and post_attention_layernorm [h]. Plus embed_tokens, lm_head (untied), norm.
  const double layer = h * q + 2 * h * kv + q * h + E * h + E * 3 * h * inter + 3 * h * inter + 2 * h;
  const double expected = (L * layer + 2 * v * h + h) * kBf16Bytes;
  const ModelConfig m = model_preset("llama-4-scout");
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp1")).total() == Approx(expected).epsilon(0.02));
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp8")).total() * 8 == Approx(expected).epsilon(0.02));
  // Meta's model card: 109B parameters (the vision tower's ~0.9B left out here): 107.7B in the text model.
  CHECK(expected / kBf16Bytes == Approx(107.8e9).epsilon(0.01));
}

TEST_CASE("issue 44: Nemotron-3-Nano BF16 weights per GPU match the checkpoint's tensors",
          "[memory][weights][families]") {
  const json t = text_config("nemotron-3-nano-30b-a3b");
  const std::string pattern = t["hybrid_override_pattern"];
  const double h = t["hidden_size"], v = t["vocab_size"];
  const double heads = t["mamba_num_heads"], inner = heads * double(t["mamba_head_dim"]);
  const double bc = 2.0 * double(t["n_groups"]) * double(t["ssm_state_size"]), conv = t["conv_kernel"];
  const double q = double(t["num_attention_heads"]) * double(t["head_dim"]);
  const double kv = double(t["num_key_value_heads"]) * double(t["head_dim"]);
  const double E = t["n_routed_experts"], inter = t["moe_intermediate_size"];
  const double shared = t["moe_shared_expert_intermediate_size"];
  // transformers' NemotronH blocks: norm [h] and one of
  //   M: in_proj [2 inner + bc + heads, h], conv1d [inner + bc, 1, conv] + bias, dt_bias, A_log, D [heads],
  //      norm [inner], out_proj [h, inner]
  //   *: q/k/v/o_proj
  //   E: gate [E, h] + e_score_correction_bias [E], experts up [inter, h] + down [h, inter], shared_experts
  //      up [shared, h] + down [h, shared]
  // plus embeddings, lm_head (untied) and norm_f.
  double params = 2 * v * h + h;
  for (const char b : pattern) {
    params += h;
    if (b == 'M')
      params += (2 * inner + bc + heads) * h + (inner + bc) * (conv + 1) + 3 * heads + inner + inner * h;
    if (b == '*') params += 2 * h * q + 2 * h * kv;
    if (b == 'E') params += E * h + E + E * 2 * h * inter + 2 * h * shared;
  }
  const ModelConfig m = model_preset("nemotron-3-nano-30b-a3b");
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp1")).total() == Approx(params * kBf16Bytes).epsilon(0.02));
  // NVIDIA's model card: 31.6B parameters in all.
  CHECK(params == Approx(31.6e9).epsilon(0.01));
}

TEST_CASE("issue 44: Gemma-3-27B BF16 weights per GPU match the checkpoint's tensors",
          "[memory][weights][families]") {
  const json t = text_config("gemma-3-27b-it");
  const double h = t["hidden_size"], L = t["num_hidden_layers"], hd = t["head_dim"];
  const double q = double(t["num_attention_heads"]) * hd, kv = double(t["num_key_value_heads"]) * hd;
  const double inter = t["intermediate_size"], v = 262208;  // vocab: Gemma3TextConfig's default
  // Gemma3DecoderLayer: q/k/v/o_proj, q_norm and k_norm [head_dim], four RMSNorms [h], mlp gate/up/down.
  // Embeddings tied (no lm_head); the final norm.
  const double expected =
      (L * (2 * h * q + 2 * h * kv + 2 * hd + 4 * h + 3 * h * inter) + v * h + h) * kBf16Bytes;
  const ModelConfig m = model_preset("gemma-3-27b");
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp2")).total() * 2 == Approx(expected).epsilon(0.02));
}

TEST_CASE("issue 44: the ledger prices only the layer kinds a model has", "[step_cost][families]") {
  const StepCost nano = decode_step(cm_of(model_preset("nemotron-3-nano-30b-a3b"), "tp2"), 8, 4096);
  CHECK(nano[Op::kMamba2Scan].layers == 23);
  CHECK(nano[Op::kMamba2Proj].layers == 23);
  CHECK(nano[Op::kSparseMla].layers == 6);
  CHECK(nano[Op::kAProj].layers == 6);
  CHECK(nano[Op::kWindowAttn].count == 0);
  CHECK(nano[Op::kGdnScan].count == 0);
  CHECK(nano[Op::kDenseMlp].count == 0);
  CHECK(nano[Op::kExpertGemm].layers == 23);
  CHECK(nano[Op::kRmsnorm].layers == 52);       // one per block
  CHECK(nano[Op::kAttnAllreduce].count == 29);  // after each mixer block
  CHECK(nano[Op::kMlpAllreduce].count == 23);   // after each MoE block
  CHECK(nano[Op::kIndexerScore].count == 0);
  const StepCost scout = decode_step(cm_of(model_preset("llama-4-scout"), "tp8"), 8, 16384);
  CHECK(scout[Op::kWindowAttn].layers == 36);
  CHECK(scout[Op::kSparseMla].layers == 12);
  CHECK(scout[Op::kSharedExpert].layers == 48);
  CHECK(scout[Op::kDenseMlp].count == 0);
  CHECK(scout[Op::kMamba2Scan].count == 0);
  const StepCost gemma = decode_step(cm_of(model_preset("gemma-3-27b"), "tp2"), 8, 4096);
  CHECK(gemma[Op::kWindowAttn].layers == 52);
  CHECK(gemma[Op::kSparseMla].layers == 10);
  CHECK(gemma[Op::kDenseMlp].layers == 62);
  CHECK(gemma[Op::kRouter].count == 0);
  CHECK(gemma[Op::kExpertGemm].count == 0);
}

TEST_CASE(
    "issue 44: Nemotron-3-Nano NVFP4 weights per GPU match the checkpoint's tensors, exclusions by name",
    "[memory][weights][families]") {
  const json t = text_config("nemotron-3-nano-30b-a3b-nvfp4");
  const json q =
      parse_checkpoint_json(testing::read_all(hf("nemotron-3-nano-30b-a3b-nvfp4") + "/hf_quant_config.json"),
                            "hf_quant_config.json");
  REQUIRE(q["quantization"]["quant_algo"] == "NVFP4");
  const json& excluded = q["quantization"]["exclude_modules"];
  auto bf16 = [&](const std::string& name) {
    for (const json& e : excluded)
      if (e == name) return true;
    return false;
  };
  const std::string pattern = t["hybrid_override_pattern"];
  const double h = t["hidden_size"], v = t["vocab_size"];
  const double heads = t["mamba_num_heads"], inner = heads * double(t["mamba_head_dim"]);
  const double bc = 2.0 * double(t["n_groups"]) * double(t["ssm_state_size"]), conv = t["conv_kernel"];
  const double qd = double(t["num_attention_heads"]) * double(t["head_dim"]);
  const double kv = double(t["num_key_value_heads"]) * double(t["head_dim"]);
  const double E = t["n_routed_experts"], inter = t["moe_intermediate_size"];
  const double shared = t["moe_shared_expert_intermediate_size"];
  // A ModelOpt NVFP4 Linear of out x in: packed weight [out, in / 2] uint8, weight_scale [out, in / 16] FP8,
  // two float32 scalars; an excluded one stays BF16.
  double bytes = (2 * v * h + h) * kBf16Bytes;  // embeddings, lm_head (excluded), norm_f
  auto linear = [&](const std::string& name, double out, double in) {
    bytes += bf16(name) ? out * in * kBf16Bytes : out * in / 2 + out * in / 16 + 8;
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    const std::string at = "backbone.layers." + std::to_string(i) + ".mixer.";
    bytes += h * kBf16Bytes;  // the block's norm
    if (pattern[i] == 'M') {
      linear(at + "in_proj", 2 * inner + bc + heads, h);
      linear(at + "out_proj", h, inner);
      bytes +=
          ((inner + bc) * (conv + 1) + 3 * heads + inner) * kBf16Bytes;  // conv1d, A_log, D, dt_bias, norm
    } else if (pattern[i] == '*') {
      for (const char* p : {"q_proj", "o_proj"}) linear(at + p, qd, h);
      for (const char* p : {"k_proj", "v_proj"}) linear(at + p, kv, h);
    } else if (pattern[i] == 'E') {
      bytes += (E * h + E) * kBf16Bytes;  // the router's gate (not a Linear) and its score bias
      for (int e = 0; e < int(E); ++e) {
        linear(at + "experts." + std::to_string(e) + ".up_proj", inter, h);
        linear(at + "experts." + std::to_string(e) + ".down_proj", h, inter);
      }
      linear(at + "shared_experts.up_proj", shared, h);
      linear(at + "shared_experts.down_proj", h, shared);
    }
  }
  const ModelConfig m = load_model(hf("nemotron-3-nano-30b-a3b-nvfp4"));
  CHECK(m.weights.quantized.kind == WeightFormatKind::kNvfp4);
  // Layers 4/5, 11/12, ... (each attention block and the Mamba-2 block before it) are excluded: the mixers'
  // group is partly BF16.
  CHECK(m.weights.share(WeightGroup::kAttention) > 0);
  CHECK(m.weights.share(WeightGroup::kAttention) < 1);
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
  CHECK(weight_bytes_per_gpu(cm_of(m, "tp1")).total() == Approx(bytes).epsilon(0.02));
}

TEST_CASE("issue 44: a null window with layer_types naming window layers is refused, naming the layer",
          "[hf_config][families]") {
  const testing::TestDir dir("hf-null-window");
  const std::string path = dir.file("config.json");
  std::ofstream(path) << R"({"model_type": "gemma3_text", "num_hidden_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": null,
      "layer_types": ["sliding_attention", "full_attention"]})";
  CHECK_THROWS_WITH(load_hf_config(path),
                    Catch::Contains("layer_types[0]") && Catch::Contains("sliding_attention"));
  // Every layer full when the window is null and the list agrees.
  std::ofstream(path) << R"({"model_type": "gemma3_text", "num_hidden_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "vocab_size": 1000, "max_position_embeddings": 4096, "sliding_window": null,
      "layer_types": ["full_attention", "full_attention"]})";
  const ModelConfig m = load_hf_config(path);
  CHECK(m.mixers.empty());
  CHECK(m.full_attention_layers() == 2);
}

TEST_CASE("issue 44: llama4 without attention_chunk_size takes Llama4TextConfig's 8192, null turns it off",
          "[hf_config][families]") {
  const testing::TestDir dir("hf-llama4-chunk");
  const std::string path = dir.file("config.json");
  const std::string head = R"({"model_type": "llama4_text", "num_hidden_layers": 4, "hidden_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 128,
      "intermediate_size_mlp": 512, "vocab_size": 1000, "max_position_embeddings": 65536,
      "num_local_experts": 4, "num_experts_per_tok": 1)";
  std::ofstream(path) << head + "}";
  const ModelConfig m = load_hf_config(path);
  CHECK(m.window_tokens == 8192);
  CHECK(m.mixer_layers(MixerKind::kChunkedAttention) == 3);
  std::ofstream(path) << head + R"(, "attention_chunk_size": null})";
  const ModelConfig full = load_hf_config(path);
  CHECK(full.window_tokens == 0);
  CHECK(full.full_attention_layers() == 4);
}
