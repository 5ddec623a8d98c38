// DeepSeek-V4 priced from a profile's dsv4 table (docs/layers.md "DeepSeek-V4"): the shipped profiles hold
// the whole attention module of a CSA and an HCA layer at the Flash and Pro shards of TP 1-8 and the
// hyper-connection mixes; a V4 step's attention block is the table's rows per layer kind (window-only layers
// as HCA ones), its prefill follows the cached prefix, and attention weights of another format than FP8 keep
// the block on the roofline.
#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/ledger.h"
#include "engine/model/model_config.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

// The table's latency (ms) of one module and phase at one shape; 0 when not there.
double row_ms(const ProfileTable& t, std::string_view module, std::string_view phase, double hidden,
              double heads, double prefix, double batch, double tokens) {
  for (size_t i = 0; i < t.rows(); ++i) {
    if (t.text_at(i, 0) == module && t.text_at(i, 1) == phase && t.at(i, 0) == hidden &&
        t.at(i, 1) == heads && t.at(i, 2) == prefix && t.at(i, 3) == batch && t.at(i, 4) == tokens)
      return t.at(i, 5);
  }
  return 0;
}

CostModel v4_under(const std::shared_ptr<OpProfile>& profile, const char* model, const char* layout,
                   const char* weights = nullptr) {
  ModelConfig m = model_preset(model);
  if (weights) override_weight_format(m, weights);
  CostOptions o;
  o.profile = profile;
  const Hardware hw = load_hardware(profile ? profile->hardware : "b200");
  return make_cost_model(m, parse_parallel(layout, "test"), m.default_kv_layout, hw, o);
}

constexpr Op kBlockOps[] = {Op::kAProj,      Op::kNormRopeKvWrite, Op::kQBProj,     Op::kIndexerScore,
                            Op::kTopkSelect, Op::kSparseMla,       Op::kWindowAttn, Op::kOProj};

double block_s(const StepCost& step) {
  double s = 0;
  for (Op op : kBlockOps) s += step[op].time_s;
  return s;
}

bool block_measured(const StepCost& step) {
  for (Op op : kBlockOps)
    if (step[op].source != TermSource::kProfile) return false;
  return true;
}

// Rows of one module and phase at one shard, any prefix, batch and tokens.
int rows_of(const ProfileTable& t, std::string_view module, std::string_view phase, double hidden,
            double heads) {
  int n = 0;
  for (size_t i = 0; i < t.rows(); ++i)
    n += t.text_at(i, 0) == module && t.text_at(i, 1) == phase && t.at(i, 0) == hidden && t.at(i, 1) == heads;
  return n;
}

}  // namespace

TEST_CASE("each dsv4 table covers DeepSeek-V4-Flash's and -Pro's TP shards and prices their blocks",
          "[op_profile][dsv4]") {
  for (const char* name :
       {"b200-sglang", "b200-vllm", "b200-trtllm", "b300-sglang", "b300-vllm", "b300-trtllm", "gb200-sglang",
        "gb200-vllm", "gb200-trtllm", "gb300-sglang", "gb300-vllm", "gb300-trtllm", "h200-sglang",
        "h200-vllm", "h100-sglang", "h100-vllm"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    const ProfileTable& t = p->table(ProfileTableKind::kDsv4);
    REQUIRE_FALSE(t.empty());
    for (const auto& [hidden, heads] : {std::pair{4096.0, 64.0}, std::pair{7168.0, 128.0}}) {
      for (const double tp : {1.0, 2.0, 4.0, 8.0}) {
        INFO("hidden " << hidden << " tp " << tp);
        for (const char* module : {"csa", "hca"}) {
          // (gb300-vllm measured V4-Pro's CSA decode at 64 sequences and more only)
          CHECK(rows_of(t, module, "decode", hidden, heads / tp) >= 20);
          CHECK(row_ms(t, module, "prefill", hidden, heads / tp, 0, 1, 4096) > 0);
        }
      }
      CHECK(row_ms(t, "mhc_pre", "any", hidden, 4, 0, 1, 1024) > 0);
      CHECK(row_ms(t, "mhc_post", "any", hidden, 4, 0, 1, 1024) > 0);
    }
    const CostModel cm = v4_under(p, "deepseek-v4-flash", "tp8");
    CHECK(block_measured(decode_step(cm, 16, 4095)));
    CHECK(block_measured(prefill_step(cm, 4096, 0, true)));
    CHECK(decode_step(cm, 16, 4095)[Op::kRmsnorm].source == TermSource::kProfile);
  }
}

TEST_CASE("DeepSeek-V4-Flash's attention block under b200-sglang is the table's CSA and HCA rows per layer",
          "[op_profile][dsv4]") {
  const auto p = load_op_profile("b200-sglang");
  const ProfileTable& t = p->table(ProfileTableKind::kDsv4);
  const CostModel cm = v4_under(p, "deepseek-v4-flash", "tp8");  // 8 heads per GPU
  const int csa = cm.model.compressed.layers_of(4);
  REQUIRE(csa == 21);
  REQUIRE(cm.model.layers - csa == 22);  // 20 HCA + 2 window-only layers, priced as HCA
  SECTION("decode: 64 requests of 8,192 cached tokens at the 64-sequence rows of KV 8,193") {
    const double c = row_ms(t, "csa", "decode", 4096, 8, 0, 64, 8193),
                 h = row_ms(t, "hca", "decode", 4096, 8, 0, 64, 8193);
    REQUIRE(c > 0);
    REQUIRE(h > 0);
    const StepCost step = decode_step(cm, 64, 8192);
    CHECK(block_measured(step));
    CHECK(block_s(step) == Approx((csa * c + 22 * h) * 1e-3).epsilon(1e-9));
  }
  SECTION("prefill: one 4,096-token prompt after 16,384 cached tokens at the rows of that prefix") {
    const double c = row_ms(t, "csa", "prefill", 4096, 8, 16384, 1, 4096),
                 h = row_ms(t, "hca", "prefill", 4096, 8, 16384, 1, 4096);
    REQUIRE(c > 0);
    REQUIRE(h > 0);
    const StepCost step = prefill_step(cm, 4096, 16384, true);
    CHECK(block_measured(step));
    CHECK(block_s(step) == Approx((csa * c + 22 * h) * 1e-3).epsilon(1e-9));
  }
  SECTION("a prefix between two measured ones is priced linearly between their rows") {
    const double lo = block_s(prefill_step(cm, 4096, 16384, true)),
                 hi = block_s(prefill_step(cm, 4096, 65536, true));
    const double mid = block_s(prefill_step(cm, 4096, (16384 + 65536) / 2, true));
    REQUIRE(hi > lo);
    CHECK(mid == Approx((lo + hi) / 2).epsilon(1e-9));
  }
  SECTION("the hyper-connection mixes are the pre and post rows of each layer") {
    const double pre = row_ms(t, "mhc_pre", "any", 4096, 4, 0, 1, 1024),
                 post = row_ms(t, "mhc_post", "any", 4096, 4, 0, 1, 1024);
    REQUIRE(pre > 0);
    REQUIRE(post > 0);
    const StepCost step = prefill_step(cm, 1024, 0, true);
    CHECK(step[Op::kRmsnorm].time_s == Approx(43 * (pre + post) * 1e-3).epsilon(1e-9));
  }
}

TEST_CASE("past vLLM's last regular prefix a DeepSeek-V4 prefill goes on toward its 65,536-token last chunk",
          "[op_profile][dsv4]") {
  const auto p = load_op_profile("b200-vllm");
  const ProfileTable& t = p->table(ProfileTableKind::kDsv4);
  const CostModel cm = v4_under(p, "deepseek-v4-flash", "tp8");
  // The last chunk of 16,384 tokens of a 65,536-token prompt was measured: the block there is its rows.
  const double c = row_ms(t, "csa", "prefill_end", 4096, 8, 49152, 1, 16384),
               h = row_ms(t, "hca", "prefill_end", 4096, 8, 49152, 1, 16384);
  const double c0 = row_ms(t, "csa", "prefill", 4096, 8, 4096, 1, 16384),
               h0 = row_ms(t, "hca", "prefill", 4096, 8, 4096, 1, 16384);
  REQUIRE(c > c0);  // both rise from the last regular prefix, so each line is the measured one
  REQUIRE(h > h0);
  REQUIRE(c0 > 0);
  REQUIRE(h0 > 0);
  const double at_end = block_s(prefill_step(cm, 16384, 49152, true));
  CHECK(at_end == Approx((21 * c + 22 * h) * 1e-3).epsilon(1e-9));
  // Between the last regular prefix (4,096) and there: linear; beyond: the same line on.
  const double at_last = block_s(prefill_step(cm, 16384, 4096, true));
  CHECK(at_last == Approx((21 * c0 + 22 * h0) * 1e-3).epsilon(1e-9));
  const double between = block_s(prefill_step(cm, 16384, (4096 + 49152) / 2, true));
  CHECK(between == Approx((at_last + at_end) / 2).epsilon(1e-9));
  const double beyond = block_s(prefill_step(cm, 16384, 49152 + (49152 - 4096), true));
  CHECK(beyond == Approx(2 * at_end - at_last).epsilon(1e-9));
}

TEST_CASE("a DeepSeek-V4 prefill never costs less than at the last regular prefix", "[op_profile][dsv4]") {
  // vLLM's CSA rows of 8,192-token chunks measure less at a 57,344-token prefix than at 4,096 (3.20 against
  // 3.61 ms at TP 8, one sequence): the block holds its last regular value rather than fall with the prefix.
  const auto p = load_op_profile("b200-vllm");
  const CostModel cm = v4_under(p, "deepseek-v4-flash", "tp8");
  double previous = 0;
  for (const int64_t prefix : {0, 2048, 4096, 20000, 57344, 200000, 1000000}) {
    INFO(prefix);
    const double s = block_s(prefill_step(cm, 8192, prefix, true));
    CHECK(s >= previous * (1 - 1e-12));
    previous = s;
  }
}

TEST_CASE("DeepSeek-V4 with BF16 attention weights keeps its attention block on the roofline",
          "[op_profile][dsv4]") {
  // The rows time FP8-block projections: another attention format is not priced from them.
  const auto p = load_op_profile("b200-sglang");
  const CostModel bf16 = v4_under(p, "deepseek-v4-flash", "tp8", "bf16");
  const CostModel roof = v4_under(nullptr, "deepseek-v4-flash", "tp8", "bf16");
  const StepCost with = decode_step(bf16, 16, 4095), without = decode_step(roof, 16, 4095);
  for (Op op : kBlockOps) {
    INFO(op_name(op));
    CHECK(with[op].source == TermSource::kRoofline);
  }
  CHECK(block_s(with) == Approx(block_s(without)).epsilon(1e-12));
  CHECK(with[Op::kRmsnorm].source == TermSource::kProfile);  // the mixes do not depend on the weights
}

TEST_CASE("DeepSeek-V4's MXFP4 experts on the Blackwell profiles are priced from rows of their own shape",
          "[op_profile][dsv4]") {
  // aiconfigurator timed V4's experts with MXFP8 activations (w4a8_mxfp4_mxfp8) under every engine: the rows
  // stand under the MXFP4 format's label at V4-Flash's and -Pro's expert shapes, so an expert-parallel layout
  // reads its own format's rows instead of the BF16 rows scaled by bytes and rate.
  for (const char* name :
       {"b200-sglang", "b200-vllm", "b200-trtllm", "b300-sglang", "b300-vllm", "b300-trtllm", "gb200-sglang",
        "gb200-vllm", "gb200-trtllm", "gb300-sglang", "gb300-vllm", "gb300-trtllm"}) {
    INFO(name);
    const auto p = load_op_profile(name);
    for (const char* model : {"deepseek-v4-flash", "deepseek-v4-pro"}) {
      INFO(model);
      const CostModel cm = v4_under(p, model, "tp8-ep8");
      const std::string rows = weight_rows_summary(cm);
      CHECK(rows.find("routed_experts mxfp4: w4a16_mxfp4 rows") != std::string::npos);
      CHECK(rows.find("routed_experts mxfp4: w4a16_mxfp4 rows scaled") == std::string::npos);
      CHECK(decode_step(cm, 16, 4095)[Op::kExpertGemm].source == TermSource::kProfile);
    }
  }
}

}  // namespace tokenline
