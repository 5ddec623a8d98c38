#include "kernels/numeric.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <pcg_random.hpp>

#include "kernels/pcg_draw.h"

using namespace tokenline;

TEST_CASE("fp8 e4m3: every finite code decodes and re-encodes to itself") {
  for (int code = 0; code < 256; ++code) {
    const auto b = static_cast<uint8_t>(code);
    if ((b & 0x7F) == kFp8E4m3NanBits) {
      CHECK(std::isnan(fp8e4m3_to_float(b)));
      continue;
    }
    const float f = fp8e4m3_to_float(b);
    const uint8_t back = float_to_fp8e4m3(f);
    // +0 and -0 keep their sign bit; every other code is unique.
    CHECK(back == b);
  }
  CHECK(fp8e4m3_to_float(kFp8E4m3MaxBits) == kFp8E4m3Max);
  CHECK(fp8e4m3_to_float(0x01) == kFp8E4m3SubnormalStep);
  CHECK(fp8e4m3_to_float(0x08) == kFp8E4m3MinNormal);
}

TEST_CASE("fp8 e4m3: round to nearest even, saturation") {
  // Between 1.0 (mantissa 0) and 1.125 (mantissa 1) the midpoint 1.0625 ties to even (1.0);
  // between 1.125 and 1.25 the midpoint 1.1875 ties to even (1.25).
  CHECK(fp8e4m3_to_float(float_to_fp8e4m3(1.0625f)) == 1.0f);
  CHECK(fp8e4m3_to_float(float_to_fp8e4m3(1.1875f)) == 1.25f);
  CHECK(fp8e4m3_to_float(float_to_fp8e4m3(1.07f)) == 1.125f);
  // Subnormal tie: 1.5 steps rounds to 2 steps, 2.5 steps to 2 steps.
  CHECK(fp8e4m3_to_float(float_to_fp8e4m3(1.5f * kFp8E4m3SubnormalStep)) == 2.0f * kFp8E4m3SubnormalStep);
  CHECK(fp8e4m3_to_float(float_to_fp8e4m3(2.5f * kFp8E4m3SubnormalStep)) == 2.0f * kFp8E4m3SubnormalStep);
  CHECK(fp8e4m3_to_float(float_to_fp8e4m3(1e6f)) == kFp8E4m3Max);
  CHECK(fp8e4m3_to_float(float_to_fp8e4m3(-1e6f)) == -kFp8E4m3Max);
  // Relative error of any normal value is at most half a mantissa step: 2^-4.
  for (float x = kFp8E4m3MinNormal; x < kFp8E4m3Max; x *= 1.0137f) {
    const float y = fp8e4m3_to_float(float_to_fp8e4m3(x));
    CHECK(std::fabs(y - x) <= x * 0.0625f);
  }
}

TEST_CASE("bf16: round to nearest even, exact for representable values") {
  CHECK(bf16_to_float(float_to_bf16(1.0f)) == 1.0f);
  const float ulp = std::ldexp(1.0f, -7);                                    // bf16 keeps 7 mantissa bits
  CHECK(bf16_to_float(float_to_bf16(1.0f + ulp / 2)) == 1.0f);               // tie -> even
  CHECK(bf16_to_float(float_to_bf16(1.0f + 1.5f * ulp)) == 1.0f + 2 * ulp);  // tie -> even
  CHECK(bf16_to_float(float_to_bf16(1.0f + 0.6f * ulp)) == 1.0f + ulp);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

TEST_CASE("pcg_draw matches pcg-cpp's pcg32 for the same seed and stream") {
  for (uint64_t seed : {0ull, 42ull, 0xDEADBEEFull}) {
    for (uint64_t stream : {0ull, 1ull, 977ull}) {
      pcg32 reference(seed, stream);
      Pcg32State ours = pcg32_seed(seed, stream);
      for (int i = 0; i < 100; ++i) REQUIRE(pcg32_next(ours) == reference());
    }
  }
}
