// Helpers shared by the core tests: configs with named sizes and request specs.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/core/instance.h"

namespace tokenline::test {

inline constexpr int64_t kPage = 64;                   // tokens per KV page (SGLang default)
inline constexpr int64_t kChunk = 32768;               // SGLang chunked_prefill_size: one step's token budget
inline constexpr int64_t kMillion = int64_t{1} << 20;  // a "1M" prompt: 32 chunks of 32K

inline InstanceConfig make_config(int64_t total_pages,
                                  ReservationPolicy reservation = ReservationPolicy::kIncremental) {
  InstanceConfig c;
  c.kv.page_tokens = kPage;
  c.kv.total_pages = total_pages;
  c.kv.reservation = reservation;
  c.scheduler.max_batch_tokens = kChunk;
  c.scheduler.max_context_tokens = 2 * kMillion;
  return c;
}

inline RequestSpec make_spec(RequestId id, int64_t prompt, int64_t output,
                             std::vector<uint64_t> hashes = {}) {
  RequestSpec s;
  s.id = id;
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  s.block_hashes = std::move(hashes);
  return s;
}

inline void require_check(const Instance& instance) {
  std::string why;
  INFO(why);
  const bool ok = instance.check(&why);
  INFO(why);
  REQUIRE(ok);
}

}  // namespace tokenline::test
