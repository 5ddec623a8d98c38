#include "engine/core/request.h"

#include <algorithm>

#include "common/mix64.h"

namespace tokenline {

namespace {

uint64_t combine(uint64_t a, uint64_t b) {
  return mix64(a ^ mix64(b));
}

// Salt for keys of requests without ids or hashes, so they never equal a hashed key by construction.
constexpr uint64_t kUniqueSalt = 0x7f4a7c159e3779b9ULL;

}  // namespace

std::string_view to_string(RejectReason reason) {
  switch (reason) {
    case RejectReason::kNone:
      return "none";
    case RejectReason::kNonPositivePrompt:
      return "non_positive_prompt";
    case RejectReason::kNonPositiveOutput:
      return "non_positive_output";
    case RejectReason::kExceedsContext:
      return "exceeds_context";
    case RejectReason::kNeverFitsKv:
      return "never_fits_kv";
    case RejectReason::kWrongRole:
      return "wrong_role";
    case RejectReason::kNeverFitsDecodeKv:
      return "never_fits_decode_kv";
  }
  return "?";
}

std::string_view to_string(RequestStatus status) {
  switch (status) {
    case RequestStatus::kWaiting:
      return "waiting";
    case RequestStatus::kRunning:
      return "running";
    case RequestStatus::kFinished:
      return "finished";
    case RequestStatus::kHandedOff:
      return "handed_off";
    case RequestStatus::kRejected:
      return "rejected";
    case RequestStatus::kCancelled:
      return "cancelled";
  }
  return "?";
}

std::vector<uint64_t> derive_page_keys(const RequestSpec& spec, int64_t page_tokens) {
  std::vector<uint64_t> keys;
  if (spec.prompt_tokens <= 0 || page_tokens <= 0) return keys;
  const int64_t full_pages = spec.prompt_tokens / page_tokens;
  if (static_cast<int64_t>(spec.token_ids.size()) >= spec.prompt_tokens) {
    keys.reserve(static_cast<size_t>(full_pages));
    uint64_t prev = 0;
    for (int64_t p = 0; p < full_pages; ++p) {
      uint64_t h = static_cast<uint64_t>(page_tokens);
      for (int64_t t = p * page_tokens; t < (p + 1) * page_tokens; ++t)
        h = combine(h, static_cast<uint64_t>(static_cast<uint32_t>(spec.token_ids[static_cast<size_t>(t)])));
      prev = combine(prev, h);
      keys.push_back(prev);
    }
    return keys;
  }
  if (!spec.block_hashes.empty() && spec.block_tokens > 0) {
    const int64_t covered = static_cast<int64_t>(spec.block_hashes.size()) * spec.block_tokens;
    const int64_t pages = std::min(full_pages, covered / page_tokens);
    keys.reserve(static_cast<size_t>(pages));
    for (int64_t p = 0; p < pages; ++p) {
      const int64_t block = ((p + 1) * page_tokens - 1) / spec.block_tokens;
      keys.push_back(combine(spec.block_hashes[static_cast<size_t>(block)], static_cast<uint64_t>(p)));
    }
    return keys;
  }
  keys.reserve(static_cast<size_t>(full_pages));
  const uint64_t base = combine(kUniqueSalt, static_cast<uint64_t>(spec.id));
  for (int64_t p = 0; p < full_pages; ++p) keys.push_back(combine(base, static_cast<uint64_t>(p)));
  return keys;
}

}  // namespace tokenline
