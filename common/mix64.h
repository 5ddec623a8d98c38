// mix64: splitmix64 of one word (the golden-ratio increment, then the finaliser): a cheap bijective mixer
// with full avalanche, the same on every platform. For keys and reproducible pseudo-random picks.
#pragma once

#include <cstdint>

namespace tokenline {

constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace tokenline
