// pcg32 (XSH-RR 64/32, pcg-cpp's pcg32 seeding) written out so that CPU and CUDA sampling draw the same
// numbers; tests check it against pcg_random.hpp's pcg32. uniform01 uses the top 24 bits (exact floats).
#pragma once

#include <cstdint>

#include "kernels/numeric.h"

namespace tokenline {

constexpr uint64_t kPcgMultiplier = 6364136223846793005ull;  // pcg-cpp default 64-bit LCG multiplier
constexpr float kTwoToMinus24 = 5.9604644775390625e-08f;     // 2^-24: spacing of 24-bit uniforms

struct Pcg32State {
  uint64_t state = 0;
  uint64_t inc = 1;
};

// Equivalent to pcg32(seed, stream): inc = 2*stream+1, state = bump(seed + inc).
TL_HD inline Pcg32State pcg32_seed(uint64_t seed, uint64_t stream) {
  Pcg32State s;
  s.inc = (stream << 1) | 1u;
  s.state = (seed + s.inc) * kPcgMultiplier + s.inc;
  return s;
}

TL_HD inline uint32_t pcg32_next(Pcg32State& s) {
  const uint64_t old = s.state;
  s.state = old * kPcgMultiplier + s.inc;
  const uint32_t xorshifted = static_cast<uint32_t>(((old >> 18) ^ old) >> 27);
  const uint32_t rot = static_cast<uint32_t>(old >> 59);
  return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

TL_HD inline float pcg32_uniform01(Pcg32State& s) {
  return static_cast<float>(pcg32_next(s) >> 8) * kTwoToMinus24;
}

}  // namespace tokenline
