// gpt-oss-120b's MXFP4 experts in the profiles whose fit-set rows run them (docs/validation.md "gpt-oss-120b
// in the fit sets"): h100-trtllm's TensorRT-LLM Triton MoE rows at gpt-oss's own shape.
#include <catch2/catch.hpp>
#include <string>

#include "cost/op_profile.h"
#include "cost/op_profile_pricing.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

struct Experts {
  FormatRows rows;
  double decode_s = 0;   // 4 requests, 1,023 tokens of context
  double prefill_s = 0;  // 8,192 new tokens
};

// gpt-oss-120b's routed experts on `profile` (vLLM's MoE backend `backend` where not empty).
Experts gpt_oss_experts(const char* profile, const char* hardware, const char* parallel,
                        const std::string& backend) {
  auto p = load_op_profile(profile);
  if (!backend.empty()) REQUIRE(select_moe_backend(*p, backend, "test"));
  CostOptions o;
  o.profile = std::move(p);
  const CostModel cm = make_cost_model(model_preset("gpt-oss-120b"), parse_parallel(parallel, "test"),
                                       KvLayout::kBf16, load_hardware(hardware), o);
  Experts e;
  for (const FormatRows& r : profile_curves(cm).format_rows)
    if (r.group == WeightGroup::kRoutedExperts) e.rows = r;
  e.decode_s = decode_step(cm, 4, 1023)[Op::kExpertGemm].time_s;
  e.prefill_s = prefill_step(cm, 8192, 0, true)[Op::kExpertGemm].time_s;
  return e;
}

}  // namespace

// TensorRT-LLM serves gpt-oss's MXFP4 checkpoint as W4A16_MXFP4 on Hopper, its MoE on the Triton backend
// (tensorrt_llm/_torch/model_config.py); h100-trtllm holds aiconfigurator's 1.2.0rc5 rows of that path at
// gpt-oss's shape (kernel_source moe_torch_flow). At TP4 and 4 tokens they take about 0.059 ms a layer
// (power_law_1.01, MoE TP 4), 36 layers ~2.1 ms. Before, no w4a16_mxfp4 row existed: the experts were priced
// from the BF16 rows of other shapes, scaled (derived). This fails if those rows are dropped or mislabelled.
TEST_CASE("h100-trtllm prices gpt-oss MXFP4 experts by TensorRT-LLM's own w4a16_mxfp4 MoE rows",
          "[op_profile][weight_format][gpt_oss]") {
  for (const char* parallel : {"tp1", "tp2", "tp4", "tp8"}) {
    CAPTURE(parallel);
    const Experts e = gpt_oss_experts("h100-trtllm", "h100", parallel, "");
    CHECK(e.rows.rows == "w4a16_mxfp4");
    CHECK_FALSE(e.rows.derived);
    CHECK(e.decode_s > 0);
  }
  const Experts tp4 = gpt_oss_experts("h100-trtllm", "h100", "tp4", "");
  CHECK(tp4.decode_s == Approx(36 * 0.059e-3).epsilon(0.25));
  CHECK(gpt_oss_experts("h100-trtllm", "h100", "tp2", "").decode_s > tp4.decode_s);
}

}  // namespace tokenline
