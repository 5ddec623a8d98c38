#include "engine/core/window_kv.h"

#include <catch2/catch.hpp>

#include "engine/core/kv_manager.h"
#include "tests/engine/core/core_test_util.h"

namespace tokenline {

namespace {
constexpr int64_t kWindow = 128;  // gpt-oss's sliding_window
// gpt-oss-120b at TP8 in BF16: 18 window layers x 1 KV head x 64 dims x K and V x 2 B = 4,608 B per token.
constexpr int64_t kWindowBytesPerToken = 18 * 1 * 64 * 2 * 2;
}  // namespace

TEST_CASE("A sliding-window request holds its last W tokens: ceil(W / page) + 1 pages at most",
          "[core][window]") {
  WindowKv w(
      {.window_tokens = kWindow, .total_pages = 16, .bytes_per_page = kWindowBytesPerToken * test::kPage},
      test::kPage);
  CHECK(w.max_pages_per_request() == 3);  // 128 / 64 + 1
  // Pages by covered tokens (the last 128 kept): 1..64 -> 1, 65..128 -> 2, 129 -> 3 (pages 0..2), 192 -> 2
  // (tokens 64..191: pages 1, 2), 193 -> 3 (pages 1..3), 256 -> 2 (pages 2, 3), 257 -> 3.
  CHECK(w.pages_to_hold(1) == 1);
  CHECK(w.pages_to_hold(128) == 2);
  CHECK(w.pages_to_hold(129) == 3);
  CHECK(w.pages_to_hold(192) == 2);
  CHECK(w.pages_to_hold(193) == 3);
  CHECK(w.pages_to_hold(256) == 2);
  CHECK(w.pages_to_hold(257) == 3);
  std::string why;
  int64_t most = 0;
  for (int64_t tokens = 1; tokens <= 5000; ++tokens) {  // a prompt, then one decode token per step
    REQUIRE(w.grow(0, tokens));
    REQUIRE(w.check(&why));
    REQUIRE(w.held_pages(0) == w.pages_to_hold(tokens));
    REQUIRE(w.held_pages(0) * test::kPage <= kWindow + test::kPage);  // W tokens + one page
    most = std::max(most, w.held_pages(0));
  }
  CHECK(most == 3);
  CHECK(w.counters().dropped_pages == 5000 / test::kPage - 2);  // every page but the window's went back
  CHECK(w.counters().used_bytes == 3 * kWindowBytesPerToken * test::kPage);
  w.release(0);
  CHECK(w.free_pages() == 16);
  REQUIRE(w.check(&why));
}

TEST_CASE("A prefill chunk longer than the window takes only the window's pages", "[core][window]") {
  WindowKv w({.window_tokens = kWindow, .total_pages = 3, .bytes_per_page = 1}, test::kPage);
  CHECK(w.pages_needed(0, 8192) == 2);  // tokens 8064..8191: pages 126, 127
  REQUIRE(w.grow(0, 8192));
  CHECK(w.held_pages(0) == 2);
  CHECK(w.pages_needed(0, 8193) == 1);
  REQUIRE(w.grow(0, 8193));  // page 128 joins; page 126 stays (token 8065 is in the window)
  CHECK(w.held_pages(0) == 3);
  CHECK(w.pages_needed(1, 100) == 2);
  CHECK_FALSE(w.grow(1, 100));  // the pool is spent: nothing changes
  CHECK(w.held_pages(1) == 0);
  CHECK(w.free_pages() == 0);
  std::string why;
  REQUIRE(w.check(&why));
}

TEST_CASE("KvManager: a window pool beside the full pages, released with them, no prefix hits",
          "[core][window]") {
  KvConfig config;
  config.page_tokens = test::kPage;
  config.total_pages = 64;
  config.window = {.window_tokens = kWindow, .total_pages = 6, .bytes_per_page = 1};
  KvManager kv(config);
  REQUIRE(kv.has_window());
  const std::vector<uint64_t> keys = {1, 2, 3, 4};
  kv.admit(0, kv.match(keys, 4), 256);
  REQUIRE(kv.grow(0, 256));
  kv.cache_pages(0, keys);
  CHECK(kv.held_pages(0) == 4);         // full layers: every token
  CHECK(kv.window_held_pages(0) == 2);  // window layers: the last 128
  kv.release(0);
  CHECK(kv.window_free_pages() == 6);
  CHECK(kv.match(keys, 4).pages == 0);  // window KV is not cached: no hit (docs/layers.md)
  // The window pool alone can refuse: three requests of 3 pages each do not fit 6 window pages.
  for (HolderId h = 0; h < 2; ++h) {
    kv.admit(h, PrefixMatch{}, 200);
    REQUIRE(kv.grow(h, 200));
  }
  kv.admit(2, PrefixMatch{}, 200);
  CHECK_FALSE(kv.grow(2, 200));
  CHECK(kv.held_pages(2) == 0);  // refused whole: the full pages were not taken either
  std::string why;
  REQUIRE(kv.check(&why));
  CHECK(kv.counters().window.used_pages == 6);
}

TEST_CASE("The scheduler stops admitting when the window pool is spent and preempts for it",
          "[core][window]") {
  // Six window pages: two requests of 200-token prompts (3 pages each) run; the third waits (kv_pages) though
  // the full pool has room, and runs when one finishes.
  InstanceConfig config = test::make_config(1000);
  config.kv.window = {.window_tokens = kWindow, .total_pages = 6, .bytes_per_page = 1};
  Instance instance(config);
  for (RequestId id = 0; id < 3; ++id) instance.add_request(test::make_spec(id, 200, 4), 0);
  StepPlan plan;
  instance.plan(plan);
  REQUIRE(plan.batches.ranks[0].entries.size() == 2);
  CHECK(plan.ranks[0].stop == StopReason::kKvPages);
  StepOutcome outcome;
  outcome.accepted_drafts.assign(1, {});
  double now_s = 0;
  std::vector<RequestRecord> done;
  while (instance.has_work()) {
    instance.plan(plan);
    instance.commit(plan, outcome, now_s += 0.01);
    test::require_check(instance);
    REQUIRE(instance.counters().kv.window.used_pages <= 6);
  }
  instance.drain(done);
  CHECK(done.size() == 3);
  for (const RequestRecord& r : done) CHECK(r.status == RequestStatus::kFinished);
}

}  // namespace tokenline

namespace tokenline {

// The real engine's rule (WindowKvConfig::hold_step_context): a step keeps the window of its first query
// (the request's previous end) besides the last W tokens, and drops it at the next grow; a decode step is
// held as before. pages() / first_page() are the runtime's window page table.
TEST_CASE("hold_step_context: a prefill chunk keeps its first query's window until the next grow",
          "[core][window]") {
  constexpr int64_t kPageTokens = 16, kW = 32;
  WindowKv legacy({.window_tokens = kW, .total_pages = 32, .bytes_per_page = 1}, kPageTokens);
  WindowKv held({.window_tokens = kW, .total_pages = 32, .bytes_per_page = 1, .hold_step_context = true},
                kPageTokens);
  // A 64-token first chunk: its first query (position 0) needs page 0 on; legacy keeps tokens 32..63 only.
  REQUIRE(legacy.grow(0, 64));
  REQUIRE(held.grow(0, 64));
  CHECK(legacy.first_page(0) == 2);
  CHECK(legacy.pages(0).size() == 2);
  CHECK(held.first_page(0) == 0);
  CHECK(held.pages(0).size() == 4);
  // The next chunk of 48 (tokens 64..111): its first query (64) sees 33..64, so pages 2.. stay.
  REQUIRE(held.grow(0, 112));
  CHECK(held.first_page(0) == 2);
  CHECK(held.pages(0).size() == 5);
  // Decode steps: the last W tokens before the new one, as legacy after a decode.
  REQUIRE(held.grow(0, 113));
  CHECK(held.first_page(0) == (112 - kW + 1) / kPageTokens);
  REQUIRE(legacy.grow(0, 113));
  CHECK(held.pages(0).size() == legacy.pages(0).size());
  std::string why;
  CHECK(held.check(&why));
  held.release(0);
  CHECK(held.pages(0).empty());
  CHECK(held.counters().used_pages == 0);
  // A fresh holder after release starts from position 0 again.
  REQUIRE(held.grow(0, 40));
  CHECK(held.first_page(0) == 0);
  CHECK(held.pages(0).size() == 3);
}

}  // namespace tokenline
