// KvManager: one attention rank's KV memory: a page pool, the page table of every request holding pages,
// and the radix prefix cache. A page is free, owned (in exactly one page table, not cached) or cached
// (a tree node, held by ref page tables). The indexer cache of DSA models shares page ids with the main
// KV (same token positions), so one page table addresses both and a page costs the sum of their bytes.
// Mutated only by its Scheduler's commit (and tests); check() may be called at any time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/kv_tier.h"
#include "engine/core/page_pool.h"
#include "engine/core/radix_cache.h"
#include "engine/core/state_pool.h"
#include "engine/core/window_kv.h"

namespace tokenline {

enum class ReservationPolicy {
  kWholeRequest,  // SGLang: all pages of prompt + output at admission (a 1M prompt holds ~57 GB at once)
  kIncremental,   // vLLM: pages per prefill chunk and per decode step as tokens are written
  kEstimate,      // SGLang: pages as written (as kIncremental), admission on an estimate of future need
                  // (SchedulerConfig::estimate) and retraction of decodes when a decode step lacks pages
};
std::string_view to_string(ReservationPolicy policy);

// Plain numbers, sized by the driver from the model's ledger.
struct KvConfig {
  int64_t page_tokens = 64;            // SGLang's and the seed's page size
  int64_t total_pages = 0;             // pages in this rank's pool
  int64_t main_bytes_per_page = 0;     // main KV bytes of one page, all layers
  int64_t indexer_bytes_per_page = 0;  // DSA indexer-cache bytes of one page, all indexer layers (0: none)
  ReservationPolicy reservation = ReservationPolicy::kIncremental;
  bool prefix_cache = true;  // false: no matching and no insertion; finished pages go free
  HostTierConfig host;       // the host-DRAM tier (kv_tier.h); pages 0: HBM only
  // Linear-attention models (state_pool.h): recurrent-state slots of this rank, one per running request,
  // and the bytes of one (all linear layers, one GPU). 0 slots: no linear layers, no state pool.
  int64_t state_slots = 0;
  int64_t state_bytes_per_slot = 0;
  // The window layers' own pool (window_kv.h); inactive: no window layers. The pages above then hold the
  // full-attention layers only (main_bytes_per_page counts those).
  WindowKvConfig window;
  // Bytes one page moves between HBM and host: main KV plus the indexer cache that shares its ids.
  int64_t transfer_bytes_per_page() const { return main_bytes_per_page + indexer_bytes_per_page; }
};

struct KvCounters {
  int64_t total_pages = 0;
  int64_t free_pages = 0;
  int64_t owned_pages = 0;
  int64_t cached_pages = 0;
  int64_t evictable_pages = 0;  // cached pages nobody holds
  int64_t used_pages = 0;       // total - free - evictable: pages someone needs
  int64_t peak_used_pages = 0;
  int64_t used_main_bytes = 0;
  int64_t used_indexer_bytes = 0;
  int64_t prefix_query_tokens = 0;  // prompt tokens looked up at admissions
  int64_t prefix_hit_tokens = 0;
  int64_t hash_comparisons = 0;
  int64_t evicted_pages = 0;
  // Host tier (all 0 without one).
  int64_t host_total_pages = 0;
  int64_t host_cached_pages = 0;
  int64_t host_hit_tokens = 0;     // of prefix_hit_tokens, the tokens loaded back from host
  int64_t host_loaded_pages = 0;   // pages copied host -> HBM
  int64_t host_written_pages = 0;  // pages copied HBM -> host (write-through and write-back)
  int64_t host_evicted_pages = 0;  // pages dropped from host by its LRU
  int64_t host_loaded_bytes = 0;   // host_loaded_pages x transfer_bytes_per_page
  int64_t host_written_bytes = 0;  // host_written_pages x transfer_bytes_per_page
  // Recurrent-state slots (all 0 without linear-attention layers).
  int64_t state_total_slots = 0;
  int64_t state_used_slots = 0;
  int64_t state_peak_used_slots = 0;
  int64_t state_used_bytes = 0;  // state_used_slots x state_bytes_per_slot
  WindowKvCounters window;       // the window pool (all 0 without one)
};

using HolderId = int32_t;  // a request's slot in its scheduler

class KvManager {
 public:
  explicit KvManager(const KvConfig& config);

  const KvConfig& config() const { return config_; }
  int64_t pages_for_tokens(int64_t tokens) const {
    // Asked for every running request on every step: a shift where pages hold a power of two tokens (64
    // in every engine here), not a 64-bit division.
    const int64_t rounded_up = tokens + config_.page_tokens - 1;
    return page_shift_ >= 0 && rounded_up >= 0 ? rounded_up >> page_shift_ : rounded_up / config_.page_tokens;
  }
  int64_t free_pages() const { return pool_.free_pages(); }
  // Pages obtainable now: free plus evictable.
  int64_t available_pages() const { return pool_.free_pages() + cache_.evictable_pages(); }
  int64_t held_pages(HolderId holder) const {
    return holds(holder) ? static_cast<int64_t>(tables_[static_cast<size_t>(holder)].pages.size()) : 0;
  }
  // holder's page ids in token order (empty when it holds none): the runtime's paged-cache addresses.
  std::span<const PageId> page_table(HolderId holder) const {
    return holds(holder) ? std::span<const PageId>(tables_[static_cast<size_t>(holder)].pages)
                         : std::span<const PageId>();
  }
  bool holds(HolderId holder) const {
    return static_cast<size_t>(holder) < tables_.size() && tables_[static_cast<size_t>(holder)].active;
  }
  // Pages holder would need to cover tokens (0 if it already does).
  int64_t pages_needed(HolderId holder, int64_t tokens) const {
    return std::max<int64_t>(0, pages_for_tokens(tokens) - held_pages(holder));
  }
  // Pages that release(holder) would make available (its owned pages plus tree pages only it holds).
  int64_t releasable_pages(HolderId holder) const;
  // The window pool (window_kv.h), what the scheduler budgets beside the pages above; 0 without one.
  bool has_window() const { return window_.has_value(); }
  int64_t window_pages_needed(HolderId holder, int64_t tokens) const {
    return window_ ? window_->pages_needed(holder, tokens) : 0;
  }
  int64_t window_free_pages() const { return window_ ? window_->free_pages() : 0; }
  int64_t window_held_pages(HolderId holder) const { return window_ ? window_->held_pages(holder) : 0; }
  // holder's window pages in token order and the page index of the first (window_kv.h): the runtime's
  // window-layer page table. Empty / 0 without a window pool.
  std::span<const PageId> window_page_table(HolderId holder) const {
    return window_ ? window_->pages(holder) : std::span<const PageId>();
  }
  int64_t window_first_page(HolderId holder) const { return window_ ? window_->first_page(holder) : 0; }

  // Longest cached prefix of keys, limited to max_pages; a miss when the cache is off, and with a window pool
  // (window layers' KV is not kept in the tree: docs/layers.md "Prefix cache").
  PrefixMatch match(std::span<const uint64_t> keys, int64_t max_pages) const;
  // match() resumed from an earlier result (see RadixCache::extend): cheap when polled every step.
  PrefixMatch extend(std::span<const uint64_t> keys, int64_t max_pages, const PrefixMatch& previous) const;
  // Starts holder's page table with the matched prefix (references taken) and counts the hit. The
  // match's host pages (keys' pages after the HBM match) are loaded into the first pages the next
  // grow(holder, ...) allocates, owned by holder until cache_pages (the plan counted them).
  void admit(HolderId holder, const PrefixMatch& match, int64_t query_tokens,
             std::span<const uint64_t> keys = {});
  // Allocates pages so holder covers tokens, evicting LRU cached pages as needed. Returns false (and
  // changes nothing) when that many pages cannot be had: a planning error upstream, never input.
  bool grow(HolderId holder, int64_t tokens);
  // Moves holder's full pages named by keys into the cache (prompt pages after its prefill).
  void cache_pages(HolderId holder, std::span<const uint64_t> keys);
  // Drops holder's page table: cached pages lose a reference, owned pages go free.
  void release(HolderId holder);
  // Evicts up to pages unreferenced cached pages (LRU); returns how many.
  int64_t evict(int64_t pages);

  bool has_host_tier() const { return host_.has_value(); }
  // write_back: pages HBM evicted and wrote to host since the last take, whose (blocking) writes the next
  // step pays (HiCache's evict waits on writing_check(write_back=True)).
  int64_t pending_store_pages() const { return pending_store_pages_; }
  void take_pending_store(int64_t pages) { pending_store_pages_ -= std::min(pages, pending_store_pages_); }
  // write_through / write_through_selective: pages backed up since the last take (asynchronous copies,
  // which the next step starts and does not wait for).
  int64_t pending_async_store_pages() const { return pending_async_store_pages_; }
  void take_pending_async_store(int64_t pages) {
    pending_async_store_pages_ -= std::min(pages, pending_async_store_pages_);
  }
  // With config().host.log_copies: appends the page copies decided since the last take, in order, to out.
  void take_copies(std::vector<TierCopy>& out);

  // The recurrent-state slots beside the pages (disabled without linear-attention layers): admit takes
  // the holder's slot, release returns it.
  const StatePool& state() const { return state_; }

  KvCounters counters() const;
  // Every page free, owned or cached exactly once; refs equal the holders; tree and tables agree; with a
  // state pool, every holder of pages holds one slot and no other holder does.
  bool check(std::string* why) const;

 private:
  struct PageTable {
    std::vector<PageId> pages;  // token order
    int64_t cached = 0;         // pages[0, cached) are tree pages
    bool active = false;
    // A host hit between admit and the grow that allocates its pages: the host path held (slots, root
    // first); pages[load_from, host_slots.size()) receive slots[load_from, ...).
    std::vector<PageId> host_slots;
    int64_t load_from = 0;
  };
  PageTable& table(HolderId holder);
  void note_usage();
  // Host tier (kv_tier.h): the load-back of t's host hit into the pages just allocated, and the copies of
  // a store whose stored path has these HBM pages (the last `written` of them were written).
  void finish_load(PageTable& t);
  void log_stores(std::span<const PageId> path_pages, int64_t written);

  KvConfig config_;
  int page_shift_ = -1;  // log2(page_tokens) when a power of two, else -1
  PagePool pool_;
  RadixCache cache_;
  std::vector<PageTable> tables_;  // by holder
  std::vector<PageId> scratch_;
  uint64_t tick_ = 0;
  int64_t owned_pages_ = 0;
  int64_t peak_used_pages_ = 0;
  int64_t prefix_query_tokens_ = 0;
  int64_t prefix_hit_tokens_ = 0;
  int64_t hash_comparisons_ = 0;
  int64_t evicted_pages_ = 0;
  StatePool state_;
  std::optional<HostTier> host_;    // none: HBM only
  std::optional<WindowKv> window_;  // none: no window layers
  std::vector<uint64_t> evicted_paths_;
  std::vector<size_t> evicted_path_ends_;
  std::vector<PageId> evicted_path_pages_;  // log_copies: the HBM page of each evicted path key
  std::vector<PageId> slot_scratch_;
  std::vector<TierCopy> copies_;  // log_copies: decided, not yet taken
  int64_t host_hit_tokens_ = 0;
  int64_t host_loaded_pages_ = 0;
  int64_t host_written_pages_ = 0;
  int64_t pending_store_pages_ = 0;
  int64_t pending_async_store_pages_ = 0;
};

}  // namespace tokenline
