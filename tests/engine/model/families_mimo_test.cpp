// Xiaomi's MiMo models (docs/layers.md "MiMo"): MiMo-V2-Flash's hybrid of full and sliding-window GQA layers
// of their own KV heads, values narrower than the keys, learned sinks, MoE on all but its first layer; and
// MiMo-7B's Qwen2 decoder with an MTP layer. Each checked against its published config.json under data/hf/
// (SOURCE.md), the expected values taken from the file's text by nlohmann, not from tokenline's reader.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/hf_quant_config.h"
#include "engine/model/kv_layout.h"
#include "engine/model/model_config.h"
#include "tests/engine/model/family_test_data.h"

using namespace tokenline;
using namespace tokenline::family_test;
using nlohmann::json;

TEST_CASE("MiMo-V2-Flash loads: window and full layers where hybrid_layer_pattern says, each of its KV heads",
          "[hf_config][families][mimo]") {
  const json j = text_config("mimo-v2-flash");
  const ModelConfig m = load_model(hf("mimo-v2-flash"));
  const int layers = j["num_hidden_layers"];
  REQUIRE(m.layers == layers);
  CHECK(m.attention == AttentionKind::kGqa);
  int window = 0;
  for (int l = 0; l < layers; ++l) {
    const bool want = j["hybrid_layer_pattern"][l] == 1;
    window += want ? 1 : 0;
    CHECK(m.window_layer(l) == want);
    CHECK((m.ffns[size_t(l)] == FfnKind::kMoe) == (j["moe_layer_freq"][l] == 1));
  }
  CHECK(window == 39);
  CHECK(m.window_tokens == j["sliding_window"].get<int64_t>());
  CHECK(m.kv_heads == j["swa_num_key_value_heads"].get<int>());           // 8: the window layers'
  CHECK(m.full_layer_kv_heads() == j["num_key_value_heads"].get<int>());  // 4: the full layers'
  CHECK(m.head_dim == j["head_dim"].get<int64_t>());
  CHECK(m.gqa_value_dim(false) == j["v_head_dim"].get<int64_t>());
  CHECK(m.gqa_value_dim(true) == j["v_head_dim"].get<int64_t>());
  CHECK(m.attention_sinks);
  CHECK(m.mlp_dense_layers() == 1);
  CHECK(m.moe_layers() == 47);
  CHECK(m.routed_experts == j["n_routed_experts"].get<int>());
  CHECK(m.experts_per_token == j["num_experts_per_tok"].get<int>());
  CHECK(m.shared_experts == 0);  // n_shared_experts null
  // KV per token and layer in BF16: K at head_dim and V at v_head_dim per KV head.
  const int64_t kv_dim = j["head_dim"].get<int64_t>() + j["v_head_dim"].get<int64_t>();
  CHECK(kv_bytes_per_token_layer(KvLayout::kBf16, m, true) == 4 * kv_dim * 2);
  CHECK(kv_bytes_per_token_layer(KvLayout::kBf16, m, false) == 8 * kv_dim * 2);
}

TEST_CASE("MiMo-V2-Flash's parameters: 309B in all, 15B active, counted from the config's fields",
          "[hf_config][families][mimo]") {
  const json j = text_config("mimo-v2-flash");
  const ModelConfig m = load_model(hf("mimo-v2-flash"));
  const double h = j["hidden_size"], heads = j["num_attention_heads"], hd = j["head_dim"],
               vd = j["v_head_dim"];
  auto attention = [&](double kv_heads) {
    return h * heads * hd + h * kv_heads * (hd + vd) + heads * vd * h;
  };
  const double full = 9 * attention(j["num_key_value_heads"]),
               window = 39 * attention(j["swa_num_key_value_heads"]);
  const double sinks = 48 * heads;  // counted on every layer (docs/layers.md "MiMo")
  const double expert = 3 * h * double(j["moe_intermediate_size"]), experts = j["n_routed_experts"];
  const double moe = 47 * (experts * expert + experts * h + experts);  // experts, router, score bias
  const double dense = 3 * h * double(j["intermediate_size"]);
  const double norms = h * 2 * 48 + h, embed = double(j["vocab_size"]) * h;
  const double want = full + window + sinks + moe + dense + norms + 2 * embed;
  const ParamCounts p = count_params(m);
  CHECK(p.total() == Approx(want).epsilon(1e-9));
  // XiaomiMiMo/MiMo-V2-Flash's card: 309B total, 15B active.
  CHECK(p.total() == Approx(309e9).epsilon(0.01));
  CHECK(p.active() == Approx(15e9).epsilon(0.05));
}

TEST_CASE("MiMo-V2-Flash prices its values at their own width and runs under every engine's B200 profile",
          "[hf_config][families][mimo]") {
  const ModelConfig m = load_model(hf("mimo-v2-flash"));
  ModelConfig wide = m;  // the same model with values as wide as the keys
  wide.v_head_dim = 0;
  const CostModel narrow_cm = cm_of(m, "tp8"), wide_cm = cm_of(wide, "tp8");
  const StepCost a = decode_step(narrow_cm, 32, 8191), b = decode_step(wide_cm, 32, 8191);
  // Fewer bytes a key and fewer FLOPs a (query, key) pair: (192 + 128) against 2 x 192 per head (the sinks'
  // few FLOPs a query apart).
  CHECK(a[Op::kSparseMla].flops == Approx(b[Op::kSparseMla].flops * (192.0 + 128) / 384).epsilon(1e-6));
  CHECK(a[Op::kSparseMla].kv_bytes < b[Op::kSparseMla].kv_bytes);
  CHECK(a[Op::kOProj].weight_bytes == Approx(b[Op::kOProj].weight_bytes * 128.0 / 192).epsilon(1e-9));
  for (const char* engine : {"sglang", "vllm", "trtllm"}) {
    INFO(engine);
    CostOptions o;
    o.profile = load_op_profile(std::string("b200-") + engine);
    const CostModel cm =
        make_cost_model(m, parse_parallel("tp8", "test"), KvLayout::kBf16, load_hardware("b200"), o);
    const StepCost step = decode_step(cm, 16, 4095);
    CHECK(step.total_s > 0);
    CHECK(step[Op::kOProj].source == TermSource::kProfile);
  }
}

TEST_CASE("MiMo-V2-Flash's fields are checked, naming the field", "[hf_config][families][mimo]") {
  testing::TestDir dir("families_mimo");
  auto edited = [&](const std::string& name, void (*edit)(json&)) {
    json j = text_config("mimo-v2-flash");
    edit(j);
    const std::string path = dir.file(name + ".json");
    std::ofstream(path) << j.dump(2);
    return path;
  };
  CHECK_THROWS_WITH(load_model(edited("swa-heads", [](json& j) { j["swa_num_attention_heads"] = 48; })),
                    Catch::Contains("swa_num_attention_heads: expected 64") && Catch::Contains("found 48"));
  CHECK_THROWS_WITH(load_model(edited("swa-v", [](json& j) { j["swa_v_head_dim"] = 192; })),
                    Catch::Contains("swa_v_head_dim: expected 128"));
  CHECK_THROWS_WITH(load_model(edited("pattern-length", [](json& j) { j["hybrid_layer_pattern"].erase(0); })),
                    Catch::Contains("hybrid_layer_pattern: expected a 0 or 1 per layer (48)") &&
                        Catch::Contains("found 47 entries"));
  CHECK_THROWS_WITH(load_model(edited("moe-2", [](json& j) { j["moe_layer_freq"][3] = 2; })),
                    Catch::Contains("moe_layer_freq[3]: expected 0 or 1"));
  CHECK_THROWS_WITH(load_model(edited("no-pattern", [](json& j) { j.erase("hybrid_layer_pattern"); })),
                    Catch::Contains("hybrid_layer_pattern: expected") && Catch::Contains("no such field"));
}

TEST_CASE("MiMo-7B: Qwen2's decoder and one MTP layer of the same dense shape",
          "[hf_config][families][mimo]") {
  const json j = text_config("mimo-7b-base");
  const ModelConfig m = load_model(hf("mimo-7b-base"));
  CHECK(m.attention == AttentionKind::kGqa);
  CHECK(m.mtp_layers == j["num_nextn_predict_layers"].get<int>());
  CHECK(m.mixers.empty());  // use_sliding_window false: every layer full
  const double h = j["hidden_size"], hd = j["head_dim"], heads = j["num_attention_heads"],
               kv = j["num_key_value_heads"], inter = j["intermediate_size"];
  const double layer = h * heads * hd + 2 * h * kv * hd + heads * hd * h + 3 * h * inter + 2 * h;
  // The MTP layer (vLLM mimo_mtp.py): two norms, input_proj (2h -> h), one decoder layer, its final norm.
  CHECK(count_params(m).mtp == Approx(2 * h + 2 * h * h + layer + h).epsilon(1e-9));
  CHECK(count_params(m).total() == Approx(36 * layer + h + 2 * double(j["vocab_size"]) * h).epsilon(1e-9));
  testing::TestDir dir("families_mimo7b");
  json sliding = j;
  sliding["use_sliding_window"] = true;
  const std::string path = dir.file("sliding.json");
  std::ofstream(path) << sliding.dump();
  CHECK_THROWS_WITH(load_model(path), Catch::Contains("use_sliding_window: expected false or null"));
}
