// synthesize_prompt: the token ids of a workload request's prompt. Workloads (traces, synthetic specs)
// carry only lengths and prefix hash ids, so `tokenline run` and the op profiler make up the tokens,
// deterministically, as byte ids (0..255: valid in every model's vocabulary and the ids serve/'s
// ByteTokenizer gives the same bytes). Engine-side: the HTTP front end (serve/) never needs it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/request.h"

namespace tokenline {

// Token p of block b is drawn from (seed, block_hashes[b], p mod block_tokens) when the block has a hash
// id, else from (seed, request id, p). Requests sharing their first k hash ids share their first k blocks
// of tokens, so prefix-cache hits in a real run follow the workload's hash ids. A spec that carries
// token_ids keeps them.
std::vector<int32_t> synthesize_prompt(const RequestSpec& spec, uint64_t seed);

constexpr int32_t kSyntheticPromptIds = 256;  // ids drawn: one per byte value

}  // namespace tokenline
