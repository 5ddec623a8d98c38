// gpt-oss-120b's MXFP4 experts in the profiles whose fit-set rows run them (docs/validation.md "gpt-oss-120b
// in the fit sets"): h100-trtllm's TensorRT-LLM Triton MoE rows at gpt-oss's own shape (h200-trtllm's too:
// the same path on H200), and b200-vllm's FlashInfer TensorRT-LLM-gen MXFP4 x MXFP8 rows behind
// `--moe-backend flashinfer_trtllm`.
#include <catch2/catch.hpp>
#include <string>

#include "cost/op_profile.h"
#include "cost/op_profile_pricing.h"
#include "cost/step_cost.h"
#include "cost/term.h"
#include "engine/model/model_config.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

struct Experts {
  FormatRows rows;
  double decode_s = 0;   // 4 requests, 1,023 tokens of context
  double prefill_s = 0;  // 8,192 new tokens
  TermSource decode_source = TermSource::kRoofline;
  TermSource prefill_source = TermSource::kRoofline;
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
  const Term decode = decode_step(cm, 4, 1023)[Op::kExpertGemm];
  const Term prefill = prefill_step(cm, 8192, 0, true)[Op::kExpertGemm];
  e.decode_s = decode.time_s;
  e.prefill_s = prefill.time_s;
  e.decode_source = decode.source;
  e.prefill_source = prefill.source;
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

// H200 is Hopper too (SM90): TensorRT-LLM takes the same W4A16_MXFP4 / Triton path, and h200-trtllm holds
// aiconfigurator's 1.2.0rc5 H200 rows of it at gpt-oss's shape (kernel_source moe_torch_flow; its
// collector at aiconfigurator d9533cb07 set moe_backend "triton" for gpt-oss at 86 < SM < 100). At MoE TP2
// the power_law_1.01 rows take 0.0975 ms a layer at 4 tokens and 2.98 ms at 8,192: 36 layers about 3.5 ms
// and 107 ms. Before, h200-trtllm had no w4a16_mxfp4 row: the experts were priced from the BF16 rows of
// other shapes, scaled (derived). This fails if those rows are dropped, mislabelled or not read.
TEST_CASE("h200-trtllm prices gpt-oss MXFP4 experts by TensorRT-LLM's own w4a16_mxfp4 MoE rows",
          "[op_profile][weight_format][gpt_oss]") {
  for (const char* parallel : {"tp1", "tp2", "tp4", "tp8", "tp2-ep2", "tp8-ep8"}) {
    CAPTURE(parallel);
    const Experts e = gpt_oss_experts("h200-trtllm", "h200", parallel, "");
    CHECK(e.rows.rows == "w4a16_mxfp4");
    CHECK_FALSE(e.rows.derived);
    CHECK(e.decode_source == TermSource::kProfile);
    CHECK(e.prefill_source == TermSource::kProfile);
    CHECK(e.decode_s > 0);
  }
  const Experts tp2 = gpt_oss_experts("h200-trtllm", "h200", "tp2", "");
  CHECK(tp2.decode_s == Approx(36 * 0.0975e-3).epsilon(0.1));
  CHECK(tp2.prefill_s == Approx(36 * 2.98e-3).epsilon(0.1));
  const Experts tp4 = gpt_oss_experts("h200-trtllm", "h200", "tp4", "");
  CHECK(tp4.decode_s < tp2.decode_s);
  CHECK(tp4.prefill_s < tp2.prefill_s);
}

// vLLM 0.15.1 with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (InferenceX's B200 gpt-oss scripts) quantizes the
// experts' activations to MXFP8 and runs FlashInfer's trtllm_fp4_block_scale_moe (quantization/mxfp4.py
// SM100_FI_MXFP4_MXFP8_TRTLLM). `--moe-backend flashinfer_trtllm` prices it by b200-vllm's
// moe_flashinfer_trtllm.csv, aiconfigurator's SGLang 0.5.14 rows of that call at gpt-oss's shape: at TP1 and
// 4 tokens 0.053 ms a layer against the BF16-activation rows' 0.069 (power_law_1.01), and 0.95 ms at 8,192
// tokens against 3.24 ms (FP8 tensor-core math). The default (no variable: BF16 activations) keeps moe.csv's
// rows. This fails if the backend's table loses its MXFP4 rows or the default moves.
TEST_CASE("b200-vllm --moe-backend flashinfer_trtllm prices gpt-oss MXFP4 experts by MXFP8-activation rows",
          "[op_profile][weight_format][moe_backend][gpt_oss]") {
  for (const char* parallel : {"tp1", "tp2", "tp4", "tp8"}) {
    CAPTURE(parallel);
    const Experts bf16 = gpt_oss_experts("b200-vllm", "b200", parallel, "");
    const Experts mxfp8 = gpt_oss_experts("b200-vllm", "b200", parallel, "flashinfer_trtllm");
    CHECK(mxfp8.rows.rows == "w4a16_mxfp4");
    CHECK_FALSE(mxfp8.rows.derived);
    CHECK(mxfp8.decode_s < bf16.decode_s);
    CHECK(mxfp8.prefill_s < 0.7 * bf16.prefill_s);
  }
  const Experts bf16 = gpt_oss_experts("b200-vllm", "b200", "tp1", "");
  const Experts mxfp8 = gpt_oss_experts("b200-vllm", "b200", "tp1", "flashinfer_trtllm");
  CHECK(bf16.decode_s == Approx(36 * 0.0688e-3).epsilon(0.15));
  CHECK(mxfp8.decode_s == Approx(36 * 0.0531e-3).epsilon(0.15));
  CHECK(mxfp8.prefill_s < 0.4 * bf16.prefill_s);
}

}  // namespace tokenline
