// Block hashes for synthetic prompts: a 63-bit id per (owner kind, owner, block index). Equal ids mean
// equal KV block content, which is all the prefix cache needs; distinct triples collide with
// probability ~2^-63 per pair (splitmix64 finalizer, Steele et al. 2014).
#pragma once

#include <cstdint>

namespace tokenline {

enum class BlockOwner : uint64_t {
  kPrefixGroup = 1,  // block j of shared prefix g
  kSession = 2,      // block j of conversation s (turns share it)
  kRequest = 3,      // block j of one request only (its unshared tail)
};

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;  // golden-ratio increment
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

inline int64_t block_hash(BlockOwner kind, uint64_t owner, uint64_t block) {
  const uint64_t h = splitmix64(splitmix64(splitmix64(static_cast<uint64_t>(kind)) ^ owner) ^ block);
  return static_cast<int64_t>(h >> 1);  // non-negative, like trace hash ids
}

}  // namespace tokenline
