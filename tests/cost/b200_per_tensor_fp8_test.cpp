// Issue 43: the B200 vLLM Llama-3.1-70B FP8 rows (calibrate/points/e2e-b200-vllm.csv) ran nvidia's ModelOpt
// checkpoint, FP8 with one scale per tensor. vLLM 0.10.2 serves such weights with a per-tensor FP8 GEMM
// (FlashInfer's bmm_fp8 on SM100 since vllm-project/vllm#22895, CUTLASS scaled_mm before), never with a
// block-scaled kernel. b200-vllm takes its GEMM rows from b200-sglang (tables_from), whose gemm.csv held
// block-FP8 rows only (SGLang 0.5.9's DeepGEMM, about twice the per-tensor kernel's time at decode sizes), so
// the per-tensor weights fell back to them (own_rows in cost/op_profile_resolve.cpp) and TPOT came out
// 1.3-1.6x measured. The table now holds SGLang 0.5.9's per-tensor rows (`fp8`) of the Llama-3.1 shapes.
#include <catch2/catch.hpp>
#include <initializer_list>
#include <string>
#include <string_view>

#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

constexpr int kLlama70bLayers = 80;

// The latency (s) of the gemm row of dtype `dtype` at m x n x k tokens x weights, as loaded (after the
// profile's lower envelope).
double gemm_row_s(const ProfileTable& t, std::string_view dtype, std::initializer_list<double> mnk) {
  for (size_t r = 0; r < t.rows(); ++r) {
    if (t.text_at(r, 0) != dtype) continue;
    int c = 0;
    bool match = true;
    for (double v : mnk) match = match && t.at(r, c++) == v;
    if (match) return t.at(r, c) * 1e-3;
  }
  FAIL("no " << dtype << " row in " << t.file);
  return 0;
}

// Llama-3.1-70B at tp1 with FP8 weights, per tensor (block 0) or in 128 x 128 blocks, priced by b200-vllm.
CostModel llama70b_fp8(int64_t block, const std::string& profile = "b200-vllm",
                       const std::string& hardware = "b200") {
  ModelConfig m = model_preset("llama-3.1-70b");
  m.weight_dtype = Dtype::kFp8;
  m.weight_block = block;
  CostOptions o;
  o.profile = load_op_profile(profile);
  return make_cost_model(m, parse_parallel("tp1", "test"), KvLayout::kFp8E4m3, load_hardware(hardware), o);
}

}  // namespace

// o_proj at tp1 is 8,192 x 8,192, a measured shape: one row per layer at one token.
TEST_CASE("issue 43: b200-vllm prices per-tensor FP8 GEMMs by per-tensor rows, block FP8 by block rows",
          "[op_profile]") {
  const auto profile = load_op_profile("b200-vllm");
  const ProfileTable& gemm = profile->table(ProfileTableKind::kGemm);
  const double per_tensor_row = gemm_row_s(gemm, "fp8", {1, 8192, 8192});
  const double block_row = gemm_row_s(gemm, "fp8_block", {1, 8192, 8192});

  const Term per_tensor = decode_step(llama70b_fp8(0), 1, 1023)[Op::kOProj];
  CHECK(per_tensor.source == TermSource::kProfile);
  CHECK(per_tensor.time_s == Approx(kLlama70bLayers * per_tensor_row));
  const Term block = decode_step(llama70b_fp8(128), 1, 1023)[Op::kOProj];
  CHECK(block.time_s == Approx(kLlama70bLayers * block_row));

  // Why it matters on B200: SGLang 0.5.9's block-FP8 rows take about twice the per-tensor kernel's time at
  // decode sizes (47.7 vs 20.1 us here, aiconfigurator's b200_sxm gemm_perf at 095f58a).
  CHECK(per_tensor_row < 0.6 * block_row);
}

// The same rows on the other SM100 GPUs' SGLang tables (B300, GB200; aiconfigurator's b300_sxm / gb200
// gemm_perf of SGLang 0.5.9 at 095f58a), read by their SGLang profiles and, through tables_from, their vLLM
// ones.
TEST_CASE("issue 43: the B300 and GB200 profiles price per-tensor FP8 GEMMs by per-tensor rows too",
          "[op_profile]") {
  for (const char* hardware : {"b300", "gb200"}) {
    for (const char* engine : {"sglang", "vllm"}) {
      const std::string name = std::string(hardware) + "-" + engine;
      INFO(name);
      const auto profile = load_op_profile(name);
      const ProfileTable& gemm = profile->table(ProfileTableKind::kGemm);
      const double per_tensor_row = gemm_row_s(gemm, "fp8", {1, 8192, 8192});
      const Term t = decode_step(llama70b_fp8(0, name, hardware), 1, 1023)[Op::kOProj];
      CHECK(t.source == TermSource::kProfile);
      CHECK(t.time_s == Approx(kLlama70bLayers * per_tensor_row));
      CHECK(per_tensor_row < 0.6 * gemm_row_s(gemm, "fp8_block", {1, 8192, 8192}));
    }
  }
}

}  // namespace tokenline
