// Kimi Linear (moonshotai/Kimi-Linear-48B-A3B-Instruct) and Kimi-K3 (moonshotai/Kimi-K3): Kimi Delta
// Attention layers beside MLA, a latent MoE and attention residuals (docs/layers.md "Kimi Linear and
// Kimi-K3"), each checked against its published config.json under data/hf/ (SOURCE.md). Expected values come
// from the file's text by nlohmann and the modeling code's tensor shapes, not from tokenline's reader.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <string>

#include "common/input_error.h"
#include "cost/memory.h"
#include "cost/step_cost.h"
#include "engine/model/hf_quant_config.h"
#include "engine/model/linear_state.h"
#include "engine/model/model_config.h"
#include "tests/engine/model/family_test_data.h"

using namespace tokenline;
using namespace tokenline::family_test;
using nlohmann::json;

namespace {

constexpr const char* kKimiLinear = "kimi-linear-48b-a3b";
constexpr const char* kKimiK3 = "kimi-k3";

std::set<int> layer_numbers(const json& list) {
  std::set<int> out;
  for (const json& v : list) out.insert(v.get<int>());
  return out;
}

// Kimi-K3's parameters from its config's fields and modeling_kimi.py's tensor shapes: KDA (q, k, v, their
// short convs, A_log, dt_bias, f_a / f_b, b_proj, the full-rank g_proj, o_norm, o_proj), MLA (q_a with its
// norm, q_b, kv_a with its norm, kv_b, o_proj, the output gate's g_proj), the dense layer, the latent MoE
// (experts at the latent width, two shared experts' width, the latent projections and norm, the router with
// its bias), the norms with the attention residuals' two norms and two hidden -> 1 projections a layer and
// the final mix's, the embedding and the untied LM head.
double kimi_k3_params(const json& j) {
  const json& k = j["linear_attn_config"];
  const double h = j["hidden_size"], layers = j["num_hidden_layers"];
  const double heads = k["num_heads"], d = k["head_dim"], conv = k["short_conv_kernel_size"];
  const double p = heads * d;
  const double kda = 3 * h * p + 3 * p * conv + heads + p + h * d + d * p + h * heads + h * p + d + p * h;
  const double mh = j["num_attention_heads"], q = j["q_lora_rank"], kv = j["kv_lora_rank"];
  const double nope = j["qk_nope_head_dim"], rope = j["qk_rope_head_dim"], v = j["v_head_dim"];
  const double mla = h * q + q + q * mh * (nope + rope) + h * (kv + rope) + kv + kv * mh * (nope + v) +
                     mh * v * h + h * mh * v;
  const double experts = j["num_experts"], lat = j["routed_expert_hidden_size"];
  const double moe_i = j["moe_intermediate_size"], shared = j["num_shared_experts"];
  const double moe =
      experts * 3 * lat * moe_i + 3 * h * moe_i * shared + 2 * h * lat + lat + experts * h + experts;
  const double dense_layers = j["first_k_dense_replace"];
  const double dense = 3 * h * j["intermediate_size"].get<double>();
  const double kda_layers = double(k["kda_layers"].size());
  const double norms = 2 * h * layers + h + 4 * h * layers + 2 * h;
  return kda_layers * kda + (layers - kda_layers) * mla + dense_layers * dense +
         (layers - dense_layers) * moe + norms + 2 * j["vocab_size"].get<double>() * h;
}

std::string edited(const testing::TestDir& dir, const std::string& name, void (*edit)(json&)) {
  json j = text_config(kKimiLinear);
  edit(j);
  const std::string path = dir.file(name + ".json");
  std::ofstream(path) << j.dump(2);
  return path;
}

}  // namespace

TEST_CASE("Kimi Linear and Kimi-K3 load: KDA on the 1-based kda_layers, MLA on the others",
          "[hf_config][families][kimi]") {
  for (const char* dir : {kKimiLinear, kKimiK3}) {
    INFO(dir);
    const json j = text_config(dir);
    const json& lac = j["linear_attn_config"];
    const ModelConfig m = load_model(hf(dir));
    const int layers = j["num_hidden_layers"];
    const std::set<int> kda = layer_numbers(lac["kda_layers"]), full = layer_numbers(lac["full_attn_layers"]);
    REQUIRE(m.mixers.size() == size_t(layers));
    for (int l = 0; l < layers; ++l) {
      CHECK((m.mixers[size_t(l)] == MixerKind::kKda) == (kda.count(l + 1) == 1));
      CHECK((m.mixers[size_t(l)] == MixerKind::kAttention) == (full.count(l + 1) == 1));
    }
    CHECK(m.mixer_layers(MixerKind::kKda) == int(kda.size()));
    CHECK(m.linear_layers() == int(kda.size()));
    CHECK(m.attention_layers() == int(full.size()));
    CHECK(m.attention == AttentionKind::kMla);
    CHECK(m.kda.heads == lac["num_heads"].get<int>());
    CHECK(m.kda.head_dim == lac["head_dim"].get<int64_t>());
    CHECK(m.kda.conv_kernel == lac["short_conv_kernel_size"].get<int64_t>());
    CHECK(m.kv_lora_rank == j["kv_lora_rank"].get<int64_t>());
    CHECK(m.qk_rope_head_dim == j["qk_rope_head_dim"].get<int64_t>());  // mla_use_nope: the same shapes
    CHECK(m.routed_experts == j["num_experts"].get<int>());
    CHECK(m.experts_per_token == j["num_experts_per_token"].get<int>());
    CHECK(m.shared_experts == j["num_shared_experts"].get<int>());
    CHECK(m.mlp_dense_layers() == j["first_k_dense_replace"].get<int>());
    CHECK(m.mlp_dense_layers() + m.moe_layers() == layers);
  }
  const ModelConfig linear = load_model(hf(kKimiLinear));
  CHECK(linear.mixer_layers(MixerKind::kKda) == 20);
  CHECK(linear.mixers[3] == MixerKind::kAttention);  // "full_attn_layers": [4, ...]: the fourth layer
  CHECK(linear.mixers[26] == MixerKind::kAttention);
  CHECK_FALSE(linear.kda.full_rank_gate);
  CHECK_FALSE(linear.attn_output_gate);
  CHECK(linear.moe_latent == 0);
  CHECK(linear.attn_res_block == 0);
  CHECK(linear.q_lora_rank == 0);                        // "q_lora_rank": null
  CHECK(linear.max_context_tokens == int64_t{1} << 20);  // its model_max_length
  const ModelConfig k3 = load_model(hf(kKimiK3));
  CHECK(k3.mixer_layers(MixerKind::kKda) == 69);
  CHECK(k3.attention_layers() == 24);
  CHECK(k3.mixers[91] == MixerKind::kAttention);  // "full_attn_layers": [..., 92, 93]
  CHECK(k3.mixers[92] == MixerKind::kAttention);
  CHECK(k3.kda.full_rank_gate);
  CHECK(k3.attn_output_gate);
  CHECK(k3.moe_latent == 3584);
  CHECK(k3.expert_width() == 3584);
  CHECK(k3.moe_latent_norm);
  CHECK(k3.attn_res_block == 12);
  CHECK_THAT(k3.left_out, Catch::Contains("vision_config"));
}

TEST_CASE("Kimi-Linear-48B-A3B's parameters are its checkpoint's tensors', 3B of them active",
          "[families][kimi][params]") {
  const ParamCounts p = count_params(load_model(hf(kKimiLinear)));
  // The checkpoint's 20 safetensors files hold 49,122,681,728 parameters (SOURCE.md); the card says 48B.
  CHECK(p.total() == 49'122'681'728.0);
  CHECK(p.total() == Approx(48e9).epsilon(0.03));
  CHECK(p.mtp == 0);
  // The card's 3B activated: 2.73B without the embedding and the LM head (3.48B with them).
  CHECK(p.active() - p.embed - p.lm_head == Approx(3e9).epsilon(0.1));
}

TEST_CASE("Kimi-K3's parameters: the config's tensor shapes, aiconfigurator's 2.8T",
          "[families][kimi][params]") {
  const json j = text_config(kKimiK3);
  const ModelConfig m = load_model(hf(kKimiK3));
  const ParamCounts p = count_params(m);
  CHECK(p.total() == Approx(kimi_k3_params(j)).epsilon(1e-12));
  CHECK(p.total() == Approx(2.8e12).epsilon(0.01));  // aiconfigurator's KimiK3Model docstring (095f58a)
  // Each MLA layer's output gate (hidden -> heads x v_head_dim) is part of the attention group.
  ModelConfig ungated = m;
  ungated.attn_output_gate = false;
  CHECK(p.attention - count_params(ungated).attention == 24.0 * j["hidden_size"].get<double>() *
                                                             j["num_attention_heads"].get<double>() *
                                                             j["v_head_dim"].get<double>());
}

TEST_CASE("Kimi-K3's compressed-tensors MXFP4: its routed experts, everything its ignore list names in BF16",
          "[families][kimi][weights]") {
  const ModelConfig m = load_model(hf(kKimiK3));
  CHECK(m.weights.quantized.kind == WeightFormatKind::kMxfp4);
  CHECK(m.weights.share(WeightGroup::kRoutedExperts) == 1);
  for (const WeightGroup g : {WeightGroup::kAttention, WeightGroup::kDenseMlp, WeightGroup::kSharedExperts,
                              WeightGroup::kLmHead, WeightGroup::kEmbed, WeightGroup::kRouter})
    CHECK(m.weights.share(g) == 0);
  CHECK(group_bytes_per_param(m, WeightGroup::kRoutedExperts) == 0.5 + 1.0 / 32);  // E2M1 + an E8M0 per 32
  // At TP8 each GPU holds an eighth of the experts (MXFP4) and of the rest (BF16), and the latent projections
  // whole (ReplicatedLinear).
  const CostModel cm =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kBf16, load_hardware("b300"));
  const ParamCounts p = count_params(m);
  const double want = p.routed_experts * (0.5 + 1.0 / 32) / 8 + (p.total() - p.routed_experts) * 2 / 8 +
                      p.latent_proj * 2 * 7 / 8;
  CHECK(weight_bytes_per_gpu(cm).total() == Approx(want).epsilon(1e-9));
  CHECK(weight_bytes_per_gpu(cm).total() == Approx(203e9).epsilon(0.01));
}

TEST_CASE("Kimi Linear's KV per token counts its MLA layers only, its KDA state one slot a request",
          "[families][kimi][kv][linear]") {
  for (const char* dir : {kKimiLinear, kKimiK3}) {
    INFO(dir);
    const json j = text_config(dir);
    const json& lac = j["linear_attn_config"];
    const ModelConfig m = load_model(hf(dir));
    const CostModel cm = cm_of(m, "tp8");
    const double mla_layers = double(lac["full_attn_layers"].size());
    const double latent = j["kv_lora_rank"].get<double>() + j["qk_rope_head_dim"].get<double>();
    CHECK(kv_bytes_per_token_per_gpu(cm, KvPlacement::kPerTpRank).main == mla_layers * latent * kBf16Bytes);
    // vLLM's kda_state_shape: q, k and v short-conv windows (heads x head_dim / tp channels, kernel - 1
    // inputs, BF16) and the float32 state heads / tp x head_dim x head_dim.
    const double heads = lac["num_heads"], d = lac["head_dim"], kernel = lac["short_conv_kernel_size"];
    const double conv = 3 * heads * d / 8 * (kernel - 1) * 2, state = heads / 8 * d * d * 4;
    const LinearStateBytes one = linear_state_bytes(m, MixerKind::kKda, 8);
    CHECK(one.conv == int64_t(conv));
    CHECK(one.recurrent == int64_t(state));
    CHECK(linear_state_bytes_per_request(m, 8) == int64_t(double(lac["kda_layers"].size()) * (conv + state)));
    CHECK(linear_state_bytes(m, MixerKind::kAttention, 8).total() == 0);
    // The state pool's slot is that request's state (cost/memory.h linear_state_capacity).
    CHECK(kv_capacity(cm, 4096).state.bytes_per_slot == linear_state_bytes_per_request(m, 8));
  }
  // Kimi-K3's attention residuals keep 8 snapshots of each chunk token live: 8 more hidden-sized buffers in
  // the activation reserve than the 8 every model has.
  const CostModel k3 = cm_of(load_model(hf(kKimiK3)), "tp8");
  CHECK(kv_capacity(k3, 4096).activation_reserve_bytes ==
        double(k3.options.max_chunk_tokens) * 7168 * 2 * (kActivationBuffers + 8));
  // Kimi-K3 at TP8: 56.2 MB a request on each GPU (aiconfigurator's ~54 MB a slot counts the state only).
  CHECK(linear_state_bytes_per_request(load_model(hf(kKimiK3)), 8) == 69 * (27'648 + 786'432));
}

TEST_CASE("Kimi-K3's ledger: KDA projections and scan on its 69 KDA layers, MLA on 24, attention residuals",
          "[families][kimi][step_cost]") {
  const ModelConfig m = load_model(hf(kKimiK3));
  const CostModel cm =
      make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kBf16, load_hardware("b300"));
  const StepCost sc = decode_step(cm, 8, 4096);
  CHECK(sc[Op::kKdaProj].layers == 69);
  CHECK(sc[Op::kKdaScan].layers == 69);
  CHECK(sc[Op::kSparseMla].layers == 24);
  CHECK(sc[Op::kAProj].layers == 24);
  CHECK(sc[Op::kGdnScan].count == 0);
  CHECK(sc[Op::kMamba2Scan].count == 0);
  // Each decode token reads and writes its request's state in every KDA layer (all 8 GPUs together).
  CHECK(sc[Op::kKdaScan].kv_bytes == Approx(69.0 * 2 * (27'648 + 786'432) * 8 * 8));
  // Attention residuals: both mixes of every layer and the final one; 1,002 snapshot reads a token over the
  // 93 layers (8 blocks of 12), whole on every GPU.
  CHECK(m.attn_res_reads() == 1002);
  CHECK(sc[Op::kAttnRes].count == 2 * 93 + 1);
  CHECK(sc[Op::kAttnRes].rank_hbm_bytes > 8.0 * 1002 * 7168 * 2 * 8);
  // Kimi Linear has neither: no attention-residual row.
  const CostModel linear = cm_of(load_model(hf(kKimiLinear)), "tp1");
  const StepCost ls = decode_step(linear, 8, 4096);
  CHECK(ls[Op::kAttnRes].count == 0);
  CHECK(ls[Op::kKdaScan].layers == 20);
  // A prefill chunk's scan grows linearly with its tokens (the chunked delta rule), not with their square.
  const StepCost p1 = prefill_step(linear, 4096, 0, true), p2 = prefill_step(linear, 8192, 0, true);
  CHECK(p2[Op::kKdaScan].rank_flops == Approx(2 * p1[Op::kKdaScan].rank_flops).epsilon(0.01));
}

TEST_CASE("A kimi_k3 wrapper whose text_config names no model_type reads as kimi_linear",
          "[hf_config][families][kimi]") {
  testing::TestDir dir("families_kimi_wrapper");
  json top = parse_checkpoint_json(testing::read_all(hf(kKimiK3) + "/config.json"), kKimiK3);
  top["text_config"].erase("model_type");
  const std::string path = dir.file("k3.json");
  std::ofstream(path) << top.dump();
  const ModelConfig m = load_model(path);
  CHECK(m.hf_model_type == "kimi_linear");
  CHECK(m.mixer_layers(MixerKind::kKda) == 69);
}

TEST_CASE("A Kimi Linear config without experts (num_experts null) is dense on every layer",
          "[hf_config][families][kimi]") {
  testing::TestDir dir("families_kimi_dense");
  const ModelConfig m = load_model(edited(dir, "dense", [](json& j) { j["num_experts"] = nullptr; }));
  CHECK_FALSE(m.is_moe());
  CHECK(m.mlp_dense_layers() == 27);
  CHECK(m.mixer_layers(MixerKind::kKda) == 20);
}

TEST_CASE("A TP size that does not divide Kimi's KDA heads is refused naming them", "[families][kimi]") {
  ModelConfig m = load_model(hf(kKimiLinear));
  m.kda.heads = 20;  // attention keeps its 32 heads: tp8 divides them, not the KDA layers' 20
  CHECK_THROWS_WITH(validate_parallel(parse_parallel("tp8", "--parallel"), m, "--parallel"),
                    Catch::Contains("20 KDA heads (linear_attn_config.num_heads)"));
  CHECK_NOTHROW(validate_parallel(parse_parallel("tp4", "--parallel"), m, "--parallel"));
}

TEST_CASE("Kimi Linear configs tokenline cannot read as written are refused naming the field",
          "[hf_config][families][kimi]") {
  testing::TestDir dir("families_kimi_refused");
  struct Case {
    const char* name;
    void (*edit)(json&);
    const char* field;
  };
  const Case cases[] = {
      {"zero-based", [](json& j) { j["linear_attn_config"]["kda_layers"][0] = 0; },
       "linear_attn_config.kda_layers: expected distinct layer numbers 1 .. num_hidden_layers (27; the list "
       "is "
       "1-based)"},
      {"disagree", [](json& j) { j["linear_attn_config"]["full_attn_layers"][0] = 5; },
       "linear_attn_config.full_attn_layers: expected the layers kda_layers leaves out"},
      {"no-heads", [](json& j) { j["linear_attn_config"].erase("num_heads"); },
       "linear_attn_config.num_heads: expected an integer field"},
      {"moe-freq", [](json& j) { j["moe_layer_freq"] = 2; }, "moe_layer_freq: expected 1"},
      {"gelu", [](json& j) { j["hidden_act"] = "gelu"; }, "hidden_act: expected silu or situ"},
      {"key-heads", [](json& j) { j["linear_attn_config"]["num_k_heads"] = 16; },
       "linear_attn_config.num_k_heads: expected 32 or null"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string path = edited(dir, c.name, c.edit);
    CHECK_THROWS_WITH(load_model(path), Catch::Contains(path + ": " + c.field));
  }
}
