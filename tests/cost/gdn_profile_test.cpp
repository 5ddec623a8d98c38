// Gated DeltaNet scans priced from a profile's gdn table (issue 44; docs/layers.md "Pricing"): the shipped
// SGLang profiles hold the conv1d and scan kernels' rows at the per-TP shards of the GDN models, a Qwen3.5
// step's gdn_scan is the table's rows, and a profile without the table leaves the scan on the roofline.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

// The table's latency (ms) of one kernel and phase at one GPU's shape, batch and tokens; 0 when not there.
double row_ms(const ProfileTable& t, std::string_view kernel, std::string_view phase, double k_heads,
              double v_heads, double batch, double tokens) {
  for (size_t i = 0; i < t.rows(); ++i) {
    if (t.text_at(i, 0) == kernel && t.text_at(i, 1) == phase && t.at(i, 0) == k_heads && t.at(i, 1) == 128 &&
        t.at(i, 2) == v_heads && t.at(i, 3) == 128 && t.at(i, 4) == 4 && t.at(i, 5) == batch &&
        t.at(i, 6) == tokens)
      return t.at(i, 7);
  }
  return 0;
}

CostModel qwen35_under(const std::shared_ptr<OpProfile>& profile, const char* layout) {
  const ModelConfig m = model_preset("qwen3.5-397b-a17b");
  CostOptions o;
  o.profile = profile;
  const Hardware hw = load_hardware(profile ? profile->hardware : "h200");
  return make_cost_model(m, parse_parallel(layout, "test"), m.default_kv_layout, hw, o);
}

}  // namespace

TEST_CASE("each SGLang profile's gdn table covers the GDN models' shards and prices their scans",
          "[op_profile][linear]") {
  // Qwen3.5-397B-A17B (16 key / 64 value heads) and Qwen3-Next-80B-A3B (16 / 32), 128-wide heads, conv 4,
  // at TP 1, 2, 4, 8: every kernel and phase measured at the exact shard (no nearest-shape scaling).
  for (const char* name : {"h200-sglang", "h100-sglang", "b200-sglang", "b300-sglang", "gb200-sglang"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    const ProfileTable& t = p->table(ProfileTableKind::kGdn);
    REQUIRE_FALSE(t.empty());
    for (const double value_heads : {64.0, 32.0})
      for (const double tp : {1.0, 2.0, 4.0, 8.0}) {
        INFO("value heads " << value_heads << " tp " << tp);
        for (const char* kernel : {"conv", "scan"}) {
          CHECK(row_ms(t, kernel, "decode", 16 / tp, value_heads / tp, 16, 1) > 0);
          CHECK(row_ms(t, kernel, "prefill", 16 / tp, value_heads / tp, 1, 4096) > 0);
        }
      }
    for (const char* layout : {"tp8-ep8", "tp4", "tp2"}) {
      INFO(layout);
      const CostModel cm = qwen35_under(p, layout);
      CHECK(decode_step(cm, 16, 4095)[Op::kGdnScan].source == TermSource::kProfile);
      CHECK(prefill_step(cm, 2048, 0, true)[Op::kGdnScan].source == TermSource::kProfile);
    }
  }
}

TEST_CASE("Qwen3.5's GDN scan under h200-sglang is the table's conv1d and scan rows, per GDN layer",
          "[op_profile][linear]") {
  const auto p = load_op_profile("h200-sglang");
  const ProfileTable& t = p->table(ProfileTableKind::kGdn);
  const CostModel cm = qwen35_under(p, "tp8-ep8");  // 2 key / 8 value heads per GPU
  const int layers = cm.model.mixer_layers(MixerKind::kGatedDeltaNet);
  REQUIRE(layers == 45);
  SECTION("decode: 16 requests (a CUDA-graph bucket of its own) at the 16-sequence rows") {
    const double conv = row_ms(t, "conv", "decode", 2, 8, 16, 1),
                 scan = row_ms(t, "scan", "decode", 2, 8, 16, 1);
    REQUIRE(conv > 0);
    REQUIRE(scan > 0);
    const StepCost step = decode_step(cm, 16, 4095);
    const Term& s = step[Op::kGdnScan];
    CHECK(s.source == TermSource::kProfile);
    CHECK(s.time_s == Approx(layers * (conv + scan) * 1e-3).epsilon(1e-9));
  }
  SECTION("prefill: one 4,096-token prompt at the one-sequence, 4,096-token rows") {
    const double conv = row_ms(t, "conv", "prefill", 2, 8, 1, 4096),
                 scan = row_ms(t, "scan", "prefill", 2, 8, 1, 4096);
    REQUIRE(conv > 0);
    REQUIRE(scan > 0);
    const StepCost step = prefill_step(cm, 4096, 0, true);
    const Term& s = step[Op::kGdnScan];
    CHECK(s.source == TermSource::kProfile);
    CHECK(s.time_s == Approx(layers * (conv + scan) * 1e-3).epsilon(1e-9));
  }
}

TEST_CASE("a profile without a gdn table keeps the GDN scan on its roofline", "[op_profile][linear]") {
  // TensorRT-LLM's profiles convert no linear-attention table (their tables_from names none).
  const auto trtllm = load_op_profile("h200-trtllm");
  REQUIRE(trtllm->table(ProfileTableKind::kGdn).empty());
  const CostModel priced = qwen35_under(trtllm, "tp8");
  const CostModel roofline = qwen35_under(nullptr, "tp8");
  const StepCost with = decode_step(priced, 16, 4095), without = decode_step(roofline, 16, 4095);
  CHECK(with[Op::kGdnScan].source == TermSource::kRoofline);
  CHECK(with[Op::kGdnScan].time_s > 0);
  CHECK(with[Op::kGdnScan].time_s == Approx(without[Op::kGdnScan].time_s).epsilon(1e-12));
  CHECK(prefill_step(priced, 2048, 0, true)[Op::kGdnScan].source == TermSource::kRoofline);
}

}  // namespace tokenline
