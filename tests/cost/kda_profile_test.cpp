// Kimi Delta Attention scans priced from a profile's kda table (docs/layers.md "Kimi Linear and Kimi-K3"):
// the shipped SGLang profiles hold aiconfigurator's SGLang 0.5.16 kernel rows at Kimi-K3's shards of TP 1-8,
// a Kimi-K3 step's kda_scan is those rows times its KDA layers, Kimi-Linear-48B (whose shards no row
// measures) and a profile without the table keep the roofline.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

const std::string kData = TOKENLINE_MODEL_TEST_DATA;

// The table's latency (ms) of one kernel and phase at one GPU's heads (head_dim 128, conv 4), batch and
// tokens; 0 when not there.
double row_ms(const ProfileTable& t, std::string_view kernel, std::string_view phase, double heads,
              double batch, double tokens) {
  for (size_t i = 0; i < t.rows(); ++i) {
    if (t.text_at(i, 0) == kernel && t.text_at(i, 1) == phase && t.at(i, 0) == heads && t.at(i, 1) == 128 &&
        t.at(i, 2) == 4 && t.at(i, 3) == batch && t.at(i, 4) == tokens)
      return t.at(i, 5);
  }
  return 0;
}

CostModel kimi_under(const std::shared_ptr<OpProfile>& profile, const char* model, const char* layout,
                     const char* hardware = "b300") {
  const ModelConfig m = load_model(kData + "/hf/" + model);
  CostOptions o;
  o.profile = profile;
  const Hardware hw = load_hardware(profile ? profile->hardware : hardware);
  return make_cost_model(m, parse_parallel(layout, "test"), m.default_kv_layout, hw, o);
}

}  // namespace

TEST_CASE("each SGLang profile's kda table covers Kimi-K3's shards", "[op_profile][linear]") {
  // 96 heads of 128 at TP 1, 2, 4, 8: prefill conv + scan everywhere; decode the conv update and the
  // recurrence, but the fused kernel alone on the 12-head shard (what SGLang runs there).
  for (const char* name :
       {"h100-sglang", "h200-sglang", "b200-sglang", "b300-sglang", "gb200-sglang", "gb300-sglang"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    const ProfileTable& t = p->table(ProfileTableKind::kKda);
    REQUIRE_FALSE(t.empty());
    for (const double heads : {96.0, 48.0, 24.0, 12.0}) {
      INFO("heads " << heads);
      CHECK(row_ms(t, "conv", "prefill", heads, 1, 4096) > 0);
      CHECK(row_ms(t, "scan", "prefill", heads, 1, 4096) > 0);
      const bool fused = heads == 12;
      CHECK((row_ms(t, "fused", "decode", heads, 16, 1) > 0) == fused);
      CHECK((row_ms(t, "conv", "decode", heads, 16, 1) > 0) == !fused);
      CHECK((row_ms(t, "scan", "decode", heads, 16, 1) > 0) == !fused);
    }
  }
}

TEST_CASE("Kimi-K3's KDA scan under b300-sglang is the table's rows, per KDA layer", "[op_profile][linear]") {
  const auto p = load_op_profile("b300-sglang");
  const ProfileTable& t = p->table(ProfileTableKind::kKda);
  const int layers = 69;
  SECTION("decode at TP8: 16 requests at the fused kernel's 16-sequence row") {
    const CostModel cm = kimi_under(p, "kimi-k3", "tp8");
    REQUIRE(cm.model.mixer_layers(MixerKind::kKda) == layers);
    const double fused = row_ms(t, "fused", "decode", 12, 16, 1);
    REQUIRE(fused > 0);
    const Term s = decode_step(cm, 16, 4095)[Op::kKdaScan];
    CHECK(s.source == TermSource::kProfile);
    CHECK(s.time_s == Approx(layers * fused * 1e-3).epsilon(1e-9));
  }
  SECTION("decode at TP4: the conv update and the recurrence rows") {
    const CostModel cm = kimi_under(p, "kimi-k3", "tp4");
    const double conv = row_ms(t, "conv", "decode", 24, 16, 1), scan = row_ms(t, "scan", "decode", 24, 16, 1);
    REQUIRE(conv > 0);
    REQUIRE(scan > 0);
    const Term s = decode_step(cm, 16, 4095)[Op::kKdaScan];
    CHECK(s.source == TermSource::kProfile);
    CHECK(s.time_s == Approx(layers * (conv + scan) * 1e-3).epsilon(1e-9));
  }
  SECTION("prefill at TP8: one 4,096-token prompt at the one-sequence, 4,096-token rows") {
    const CostModel cm = kimi_under(p, "kimi-k3", "tp8");
    const double conv = row_ms(t, "conv", "prefill", 12, 1, 4096),
                 scan = row_ms(t, "scan", "prefill", 12, 1, 4096);
    REQUIRE(conv > 0);
    REQUIRE(scan > 0);
    const Term s = prefill_step(cm, 4096, 0, true)[Op::kKdaScan];
    CHECK(s.source == TermSource::kProfile);
    CHECK(s.time_s == Approx(layers * (conv + scan) * 1e-3).epsilon(1e-9));
  }
}

TEST_CASE("the vLLM profiles read the SGLang KDA rows through tables_from", "[op_profile][linear]") {
  const CostModel sglang = kimi_under(load_op_profile("b300-sglang"), "kimi-k3", "tp8");
  const CostModel vllm = kimi_under(load_op_profile("b300-vllm"), "kimi-k3", "tp8");
  const Term s = decode_step(sglang, 8, 2047)[Op::kKdaScan];
  const Term v = decode_step(vllm, 8, 2047)[Op::kKdaScan];
  CHECK(v.source == TermSource::kProfile);
  CHECK(v.time_s == Approx(s.time_s).epsilon(1e-12));
}

TEST_CASE("KDA scans the kda table does not measure keep their roofline", "[op_profile][linear]") {
  SECTION("Kimi-Linear-48B: 32 heads, a shard aiconfigurator did not time at any TP") {
    const auto p = load_op_profile("b200-sglang");
    for (const char* layout : {"tp1", "tp2", "tp4", "tp8"}) {
      INFO(layout);
      const CostModel priced = kimi_under(p, "kimi-linear-48b-a3b", layout);
      const CostModel roofline = kimi_under(nullptr, "kimi-linear-48b-a3b", layout, "b200");
      const Term with = decode_step(priced, 16, 4095)[Op::kKdaScan];
      CHECK(with.source == TermSource::kRoofline);
      CHECK(with.time_s == Approx(decode_step(roofline, 16, 4095)[Op::kKdaScan].time_s).epsilon(1e-12));
      CHECK(prefill_step(priced, 2048, 0, true)[Op::kKdaScan].source == TermSource::kRoofline);
    }
  }
  SECTION("a profile without a kda table (TensorRT-LLM's)") {
    const auto trtllm = load_op_profile("b300-trtllm");
    REQUIRE(trtllm->table(ProfileTableKind::kKda).empty());
    const CostModel priced = kimi_under(trtllm, "kimi-k3", "tp8");
    const CostModel roofline = kimi_under(nullptr, "kimi-k3", "tp8");
    const Term with = decode_step(priced, 16, 4095)[Op::kKdaScan];
    CHECK(with.source == TermSource::kRoofline);
    CHECK(with.time_s > 0);
    CHECK(with.time_s == Approx(decode_step(roofline, 16, 4095)[Op::kKdaScan].time_s).epsilon(1e-12));
    CHECK(prefill_step(priced, 2048, 0, true)[Op::kKdaScan].source == TermSource::kRoofline);
  }
}

TEST_CASE("Kimi-K3's MXFP4 experts on the Blackwell profiles read rows of their own shape",
          "[op_profile][linear]") {
  // aiconfigurator timed Kimi-K3's routed experts (3,584-wide latent x 3,072, 896 experts, top 16): SGLang's
  // FlashInfer TensorRT-LLM MoE with MXFP8 activations, vLLM's Marlin W4A16 MXFP4 MoE; both stand under the
  // MXFP4 format's label, so K3's experts no longer take gpt-oss-120b's rows carried to their shape.
  for (const char* name : {"b200-sglang", "b200-vllm", "b300-sglang", "b300-vllm", "gb200-sglang",
                           "gb200-vllm", "gb300-sglang", "gb300-vllm"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    const ProfileTable& t = p->table(ProfileTableKind::kMoe);
    // K3's rows at power-law 1.01 routing (the profiles' moe_routing_alpha) and MoE TP8, by tokens.
    auto row_ms_at = [&t](double tokens) {
      for (size_t i = 0; i < t.rows(); ++i)
        if (t.text_at(i, 0) == "w4a16_mxfp4" && t.text_at(i, 1) == "power_law_1.01" && t.at(i, 0) == tokens &&
            t.at(i, 1) == 3584 && t.at(i, 2) == 3072 && t.at(i, 3) == 16 && t.at(i, 4) == 896 &&
            t.at(i, 5) == 8 && t.at(i, 6) == 1)
          return t.at(i, 7);
      return 0.0;
    };
    const double at16 = row_ms_at(16), at256 = row_ms_at(256);
    REQUIRE(at16 > 0);
    REQUIRE(at256 > at16);
    // 16 requests' tokens, times the expert imbalance: between K3's own 16- and 256-token rows.
    const CostModel cm = kimi_under(p, "kimi-k3", "tp8");
    const Term e = decode_step(cm, 16, 4095)[Op::kExpertGemm];
    const double per_layer_ms = e.time_s / cm.model.moe_layers() * 1e3;
    CHECK(e.source == TermSource::kProfile);
    CHECK(per_layer_ms >= at16 * (1 - 1e-9));
    CHECK(per_layer_ms <= at256 * (1 + 1e-9));
  }
}

}  // namespace tokenline
