// Issue 43: TensorRT-LLM's fused MoE priced by the backend a deployment launched (moe_config.backend,
// tensorrt_llm/llmapi/llm_args.py MoeConfig.backend, default CUTLASS). b200-trtllm's moe table holds the
// CUTLASS fused MoE's rows; its DEEPGEMM table the DeepGEMM backend's block-FP8 rows, which aiconfigurator
// 1.2.0rc5 times for DeepSeek-V3/R1's expert shape only at MoE TP x EP >= 16.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/input_error.h"
#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/op_profile_pricing.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

// DeepSeek-V3's (block-FP8) routed experts in a decode step of 16 requests at 1,023 cached tokens on B200
// under b200-trtllm with MoE backend `backend` ("": the profile's default): their time and the rows that
// priced them.
struct ExpertsPriced {
  double decode_s = 0;
  FormatRows rows;
};
ExpertsPriced deepseek_experts(const char* parallel, const std::string& backend) {
  auto p = load_op_profile("b200-trtllm");
  if (!backend.empty()) REQUIRE(select_moe_backend(*p, backend, "test"));
  CostOptions o;
  o.profile = std::move(p);
  const CostModel cm = make_cost_model(model_preset("deepseek-v3"), parse_parallel(parallel, "test"),
                                       KvLayout::kFp8E4m3, load_hardware("b200"), o);
  ExpertsPriced out;
  out.decode_s = decode_step(cm, 16, 1023)[Op::kExpertGemm].time_s;
  for (const FormatRows& r : profile_curves(cm).format_rows)
    if (r.group == WeightGroup::kRoutedExperts) out.rows = r;
  return out;
}

int64_t rows_of_dtype(const OpProfile& p, std::string_view dtype) {
  const ProfileTable& t = p.table(ProfileTableKind::kMoe);
  int64_t n = 0;
  for (size_t i = 0; i < t.rows(); ++i) n += t.text_at(i, 0) == dtype;
  return n;
}

}  // namespace

// The B200 DeepSeek-R1 TensorRT-LLM runs at attention TP launched moe_config.backend TRTLLM (InferenceX
// dsr1_fp8_b200_trt.sh at dcc0f53a8, dsr1_fp8_b200_trt_mtp.sh at 5d517074c), a kernel no aiconfigurator
// table times. Before, b200-trtllm's moe table mixed DeepGEMM's block-FP8 rows into CUTLASS's: at MoE TP 4
// the experts were priced from Qwen3-235B's DeepGEMM rows scaled to DeepSeek's shape (0.39 ms a layer, 22.6
// ms a step), at MoE TP 8, where no DeepGEMM row exists, from DeepSeek's own CUTLASS BF16 rows at FP8 bytes
// (6.1 ms): half the GPUs cost 3.7x. Now both splits read the model's own CUTLASS rows, and TP 4, each GPU
// reading twice the expert bytes of TP 8, costs about twice TP 8. This fails if a TP split is priced by
// another model's DeepGEMM rows again.
TEST_CASE(
    "issue 43: b200-trtllm prices block-FP8 experts at attention TP from the CUTLASS rows of their shape",
    "[op_profile][weight_format][moe_backend]") {
  const ExpertsPriced tp8 = deepseek_experts("tp8", "");
  const ExpertsPriced tp4 = deepseek_experts("tp4", "");
  for (const ExpertsPriced* e : {&tp8, &tp4}) {
    CHECK(e->rows.format == "fp8-block128");
    CHECK(e->rows.rows == "bfloat16");  // CUTLASS's BF16 rows scaled to FP8 bytes
    CHECK(e->rows.derived);
  }
  CHECK(tp4.decode_s > 1.5 * tp8.decode_s);
  CHECK(tp4.decode_s < 2.5 * tp8.decode_s);
  // TRTLLM, what those runs launched: no table of its own, the moe table prices it.
  auto p = load_op_profile("b200-trtllm");
  CHECK_FALSE(select_moe_backend(*p, "TRTLLM", "--moe-backend"));
  CHECK(deepseek_experts("tp4", "CUTLASS").decode_s == tp4.decode_s);
}

// The runs under attention DP launched DEEPGEMM (the same scripts): --moe-backend DEEPGEMM swaps the DeepGEMM
// backend's block-FP8 rows in (GLM-5's expert shape, the nearest measured at MoE EP 8) and leaves the BF16
// rows.
TEST_CASE("issue 43: --moe-backend DEEPGEMM prices block-FP8 experts on b200-trtllm from DeepGEMM's rows",
          "[op_profile][weight_format][moe_backend]") {
  auto p = load_op_profile("b200-trtllm");
  CHECK(p->moe_backend == "CUTLASS");
  const int64_t bf16 = rows_of_dtype(*p, "bfloat16");
  REQUIRE(bf16 > 0);
  CHECK(rows_of_dtype(*p, "fp8_block") == 0);
  CHECK(select_moe_backend(*p, "CUTLASS", "--moe-backend"));
  CHECK(rows_of_dtype(*p, "fp8_block") == 0);
  CHECK(select_moe_backend(*p, "DEEPGEMM", "--moe-backend"));
  CHECK(p->moe_backend == "DEEPGEMM");
  CHECK(rows_of_dtype(*p, "fp8_block") > 0);
  CHECK(rows_of_dtype(*p, "bfloat16") == bf16);

  const ExpertsPriced cutlass = deepseek_experts("dp8-ep8", "");
  const ExpertsPriced deepgemm = deepseek_experts("dp8-ep8", "DEEPGEMM");
  CHECK(cutlass.rows.rows == "bfloat16");
  CHECK(deepgemm.rows.rows == "fp8_block");
  CHECK_FALSE(deepgemm.rows.derived);
  CHECK(deepgemm.decode_s != cutlass.decode_s);

  // TensorRT-LLM's names only on a TensorRT-LLM profile (vLLM's and SGLang's spellings are refused, naming
  // the flag); a Hopper profile has no DeepGEMM table (its block-FP8 rows are CUTLASS's).
  auto q = load_op_profile("b200-trtllm");
  CHECK_THROWS_AS(select_moe_backend(*q, "deep_gemm", "--moe-backend"), InputError);
  CHECK_THROWS_AS(select_moe_backend(*q, "triton", "--moe-backend"), InputError);
  auto v = load_op_profile("b200-vllm");
  CHECK_THROWS_AS(select_moe_backend(*v, "DEEPGEMM", "--moe-backend"), InputError);
  auto h = load_op_profile("h200-trtllm");
  CHECK_FALSE(select_moe_backend(*h, "DEEPGEMM", "--moe-backend"));
}

}  // namespace tokenline
