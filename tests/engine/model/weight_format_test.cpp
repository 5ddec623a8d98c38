#include "engine/model/weight_format.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

TEST_CASE("Bytes per parameter count each format's scales and zero points", "[weight_format]") {
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kBf16}, 7168) == 2);
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kFp8PerTensor}, 7168) == 1);
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kFp8PerChannel}, 4096) == 1 + 4.0 / 4096);
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kFp8Block, .group = 128}, 7168) ==
        1 + 4.0 / (128 * 128));
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kNvfp4}, 7168) == 0.5 + 1.0 / 16);
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kMxfp4}, 7168) == 0.5 + 1.0 / 32);
  // compressed-tensors W4A16 group 32, symmetric: BF16 scales only.
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kInt4, .group = 32}, 7168) == 0.5 + 2.0 / 32);
  // AWQ / GPTQ group 128: FP16 scale + a 4-bit zero point per group.
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kInt4, .group = 128, .zero_points = true}, 7168) ==
        0.5 + 2.5 / 128);
  CHECK(weight_bytes_per_param({.kind = WeightFormatKind::kInt8, .group = 0}, 1024) == 1 + 2.0 / 1024);
}

TEST_CASE("FP4 GEMMs run at the FP4 rate where the hardware has one, else weight-only at BF16",
          "[weight_format]") {
  const Hardware h200 = load_hardware("h200");
  const Hardware b200 = load_hardware("b200");
  const WeightFormat nvfp4{.kind = WeightFormatKind::kNvfp4};
  REQUIRE(b200.peak_flops_nvfp4 > b200.peak_flops_fp8);
  CHECK(weight_gemm_peak_flops(nvfp4, b200) == b200.peak_flops_nvfp4);
  CHECK(weight_gemm_peak_flops({.kind = WeightFormatKind::kMxfp4}, b200) == b200.peak_flops_nvfp4);
  CHECK(h200.peak_flops_nvfp4 == 0);
  CHECK(weight_gemm_peak_flops(nvfp4, h200) == h200.peak_flops_bf16);
  CHECK(weight_gemm_peak_flops({.kind = WeightFormatKind::kFp8Block, .group = 128}, h200) ==
        h200.peak_flops_fp8);
  CHECK(weight_gemm_peak_flops({.kind = WeightFormatKind::kInt4, .group = 32, .weight_only = true}, h200) ==
        h200.peak_flops_bf16);
}

TEST_CASE("Weight format names parse back to their formats, others are refused with the list",
          "[weight_format]") {
  for (const char* name : {"bf16", "fp16", "fp32", "fp8", "fp8-channel", "fp8-block128", "nvfp4", "mxfp4",
                           "mxfp8", "int4-g128", "int4-g32-zp", "int8-g0"}) {
    CHECK(weight_format_name(parse_weight_format(name, "--weights-format")) == name);
  }
  CHECK(parse_weight_format("fp8-block", "x").group == 128);
  CHECK_THROWS_WITH(
      parse_weight_format("int3", "--weights-format"),
      Catch::Contains("--weights-format: expected a weight format: bf16") && Catch::Contains("found 'int3'"));
  CHECK_THROWS_AS(parse_weight_format("int4-g", "x"), InputError);
  CHECK_THROWS_AS(parse_weight_format("fp8-block0", "x"), InputError);
}
