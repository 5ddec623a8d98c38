#include "engine/runtime/synthetic_prompt.h"

namespace tokenline {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;         // 2^64 / golden ratio (splitmix64's increment)
constexpr uint64_t kPerRequestTag = 0x5245510000000000ull;  // "REQ": keeps request streams off hash ids

// splitmix64's finaliser: a bijective mix, so distinct inputs give unrelated outputs.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int32_t draw_byte(uint64_t seed, uint64_t key, uint64_t offset) {
  const uint64_t h = mix(mix(seed + kGolden) ^ mix(key + 2 * kGolden) ^ (offset + 1) * kGolden);
  return static_cast<int32_t>(h % kSyntheticPromptIds);
}

}  // namespace

std::vector<int32_t> synthesize_prompt(const RequestSpec& spec, uint64_t seed) {
  if (!spec.token_ids.empty()) return spec.token_ids;
  std::vector<int32_t> ids(static_cast<size_t>(spec.prompt_tokens));
  const int64_t block = spec.block_tokens > 0 ? spec.block_tokens : 1;
  for (int64_t p = 0; p < spec.prompt_tokens; ++p) {
    const auto b = static_cast<size_t>(p / block);
    ids[static_cast<size_t>(p)] =
        b < spec.block_hashes.size()
            ? draw_byte(seed, spec.block_hashes[b], static_cast<uint64_t>(p % block))
            : draw_byte(seed, kPerRequestTag ^ static_cast<uint64_t>(spec.id), static_cast<uint64_t>(p));
  }
  return ids;
}

}  // namespace tokenline
