// Software BF16 and FP8 E4M3 (OCP "fn": no infinities, max 448) conversions, round-to-nearest-even.
// Shared by the CPU reference kernels and the CUDA kernels: every function is host+device and uses only
// bit operations, so both backends produce bit-identical encodings for the same float.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TL_HD __host__ __device__
#else
#define TL_HD
#endif

namespace tokenline {

constexpr float kFp8E4m3Max = 448.0f;                  // 1.75 * 2^8: largest finite e4m3 value (S.1111.110)
constexpr float kFp8E4m3MinNormal = 0.015625f;         // 2^-6: exponent field 1 with bias 7
constexpr float kFp8E4m3SubnormalStep = 0.001953125f;  // 2^-9: 2^-6 / 8 mantissa steps
constexpr uint8_t kFp8E4m3MaxBits = 0x7E;              // encoding of 448
constexpr uint8_t kFp8E4m3NanBits = 0x7F;              // S.1111.111 is the only NaN

TL_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

TL_HD inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// float -> bf16 bits, round-to-nearest-even; NaN stays a quiet NaN.
TL_HD inline uint16_t float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

TL_HD inline float bf16_to_float(uint16_t b) {
  return bits_float(static_cast<uint32_t>(b) << 16);
}

// float -> e4m3 bits, round-to-nearest-even, saturating to +-448 (values beyond are clamped, as the
// scaled KV quantizer never produces them); NaN -> NaN.
TL_HD inline uint8_t float_to_fp8e4m3(float f) {
  const uint32_t u = float_bits(f);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint8_t>(sign | kFp8E4m3NanBits);
  const float a = fabsf(f);
  if (a >= kFp8E4m3Max) return static_cast<uint8_t>(sign | kFp8E4m3MaxBits);
  if (a < kFp8E4m3MinNormal) {
    // Subnormal grid k * 2^-9; k == 8 is exactly the smallest normal, whose encoding is also 8.
    const float k = rintf(a / kFp8E4m3SubnormalStep);
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(k));
  }
  const uint32_t abs_bits = float_bits(a);
  const int32_t exponent = static_cast<int32_t>(abs_bits >> 23) - 127;  // unbiased float exponent
  const uint32_t mantissa = abs_bits & 0x7FFFFFu;
  const uint32_t keep = mantissa >> 20;  // top 3 of 23 mantissa bits
  const uint32_t rest = mantissa & 0xFFFFFu;
  const uint32_t half = 0x80000u;
  const uint32_t round_up = (rest > half || (rest == half && (keep & 1u))) ? 1u : 0u;
  uint32_t code = (static_cast<uint32_t>(exponent + 7) << 3) + keep + round_up;  // carry bumps exponent
  if (code > kFp8E4m3MaxBits) code = kFp8E4m3MaxBits;
  return static_cast<uint8_t>(sign | code);
}

// Exact: a normal e4m3 value is rebuilt as float bits (exponent rebiased 7 -> 127, mantissa shifted up).
TL_HD inline float fp8e4m3_to_float(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exponent = (b >> 3) & 0xFu;
  const uint32_t mantissa = b & 0x7u;
  if (exponent == 0xFu && mantissa == 0x7u) return bits_float(0x7FC00000u);
  if (exponent == 0)
    return bits_float(sign | float_bits(static_cast<float>(mantissa) * kFp8E4m3SubnormalStep));
  return bits_float(sign | ((exponent + 120u) << 23) | (mantissa << 20));  // 120 = 127 - 7
}

}  // namespace tokenline
