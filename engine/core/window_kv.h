// WindowKv: one attention rank's KV of the window layers (sliding-window and chunked attention;
// docs/layers.md), a pool of its own beside KvManager's full-attention pages. A request keeps the pages of
// its last window_tokens tokens only: at most ceil(W / page) + 1 pages, whatever its context; pages that fall
// out of the window go back to the pool as the request grows. Sized by the driver from the model
// (cost/memory.h kv_capacity: SGLang's swa_full_tokens_ratio split, vLLM's shared block pool). Owned and
// mutated by one KvManager (its grow / release); check() may be called at any time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/core/page_pool.h"

namespace tokenline {

using HolderId = int32_t;  // a request's slot in its scheduler (kv_manager.h says the same)

// Plain numbers, sized by the driver; window_tokens 0: the model has no window layers (no pool).
struct WindowKvConfig {
  int64_t window_tokens = 0;   // W: the keys a window layer's query sees at most
  int64_t total_pages = 0;     // pages of this rank's window pool
  int64_t bytes_per_page = 0;  // window layers' KV of one page, all window layers
  // The real engine's kernels read the window pages: a step's first query (at the request's previous end)
  // still sees the W - 1 keys before it, so a grow keeps the pages from that query's window on and drops
  // the rest at the next grow (vLLM's SlidingWindowManager frees by num_computed_tokens before the step,
  // vllm/v1/core/single_type_kv_cache_manager.py remove_skipped_blocks). false (the simulator's rule):
  // only the last W tokens after the step are kept, which a prefill chunk longer than one token outruns.
  bool hold_step_context = false;
  bool active() const { return window_tokens > 0; }
};

struct WindowKvCounters {
  int64_t total_pages = 0;
  int64_t used_pages = 0;
  int64_t peak_used_pages = 0;
  int64_t used_bytes = 0;
  int64_t dropped_pages = 0;  // pages returned as they fell out of a request's window
};

class WindowKv {
 public:
  WindowKv(const WindowKvConfig& config, int64_t page_tokens);

  const WindowKvConfig& config() const { return config_; }
  // The most pages one request ever holds: ceil(W / page) + 1.
  int64_t max_pages_per_request() const;
  // Pages a request covering `tokens` tokens holds: those of its last min(tokens, W) tokens.
  int64_t pages_to_hold(int64_t tokens) const;
  int64_t free_pages() const { return pool_.free_pages(); }
  int64_t held_pages(HolderId holder) const;
  // Pages holder takes from the pool, net of those it gives back, to cover `tokens` (never below 0): what a
  // plan charges to its budget. A grow succeeds when the free pages cover each request's charge in turn.
  int64_t pages_needed(HolderId holder, int64_t tokens) const;
  // Allocates what holder needs to cover `tokens` and frees what fell out of the window. Returns false (and
  // changes nothing) when the pool lacks the pages: a planning error upstream, never input.
  bool grow(HolderId holder, int64_t tokens);
  void release(HolderId holder);  // every page of holder back to the pool
  // holder's pages in token order (empty when none) and the index, in pages of its tokens, of the first:
  // pages()[i] holds the tokens of page first_page() + i (the real engine's window-layer page table).
  std::span<const PageId> pages(HolderId holder) const;
  int64_t first_page(HolderId holder) const;

  WindowKvCounters counters() const;
  // Every page free or held by exactly one holder; no holder above max_pages_per_request; counters agree.
  bool check(std::string* why) const;

 private:
  struct Ring {
    std::vector<PageId> pages;  // token order: pages[i] holds the tokens of page first + i
    int64_t first = 0;          // index (in pages of the request's tokens) of pages[0]
    int64_t covered = 0;        // tokens covered by the last grow (hold_step_context)
  };
  int64_t first_kept_page(int64_t tokens) const;
  int64_t first_kept_page(HolderId holder, int64_t tokens) const;  // hold_step_context applied
  void change(HolderId holder, int64_t tokens, int64_t& alloc, int64_t& drop) const;

  WindowKvConfig config_;
  int64_t page_tokens_ = 0;
  PagePool pool_;
  std::vector<Ring> rings_;  // by holder
  int64_t held_ = 0;
  int64_t peak_used_ = 0;
  int64_t dropped_ = 0;
};

}  // namespace tokenline
