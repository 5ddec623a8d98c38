// HostTier: the host-DRAM tier of a rank's prefix cache (SGLang HiCache's L2 host pool). A second radix
// tree over the same page keys, with its own pool of host page slots and its own LRU: a page evicted from
// HBM stays findable here, and a later prefix hit beyond the HBM match is loaded back instead of being
// recomputed. Owned by one KvManager, mutated only through it; no clock, no bytes (pricing is cost/'s).
//
// What SGLang does and what is modelled (sglang python/sglang/srt/mem_cache/hiradix_cache.py and
// managers/cache_controller.py, v0.5.x; server_args.py for the defaults):
//  - write_through: a node is backed up to host when inserted (write_through_threshold = 1);
//    write_through_selective: once it was inserted twice (threshold 2); both asynchronous.
//  - write_back: nothing is written until HBM evicts the node; evict() then blocks until the writes are
//    done (writing_check(write_back=True)), so the write is a stall.
//  - a host hit is loaded back all or nothing (load_back), layer by layer while the forward runs.
// Differences (stated in docs/kv-tiers.md): HiCache keeps one tree whose nodes carry a device and a host
// value; here the host tier is its own tree, so a path is stored root first (an evicted leaf's ancestors are
// written with it), and the host LRU may drop a page still resident in HBM (HiCache evicts host copies of
// device-evicted nodes only; with the host pool at its default 2x HBM the two rarely differ).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/page_pool.h"
#include "engine/core/radix_cache.h"
#include "engine/core/tier_copy.h"

namespace tokenline {

// SGLang --hicache-write-policy (server_args.py default "write_through").
enum class WritePolicy { kWriteThrough, kWriteThroughSelective, kWriteBack };
std::string_view to_string(WritePolicy policy);
// Inserts of a page before write-through backs it up (hiradix_cache.py write_through_threshold: 1 for
// write_through, 2 for write_through_selective); write_back never writes on insert.
int32_t write_through_threshold(WritePolicy policy);

struct HostTierConfig {
  int64_t pages = 0;  // host page slots of this rank (0: no host tier)
  WritePolicy write_policy = WritePolicy::kWriteThrough;
  // Log every page copy (TierCopy) for a world that moves the bytes (the real engine); off in simulation,
  // where only their count is priced. Changes no decision.
  bool log_copies = false;
};

class HostTier {
 public:
  explicit HostTier(int64_t pages);

  int64_t total_pages() const { return pool_.total_pages(); }
  int64_t cached_pages() const { return tree_.cached_pages(); }
  int64_t evicted_pages() const { return evicted_pages_; }
  // Pages of keys held as one path from the root, at most max_pages. Const; no LRU touch.
  int64_t match(std::span<const uint64_t> keys, int64_t max_pages) const;
  // Marks the first pages of keys' path recently used and holds them (a reference each, appended to
  // slots root first) until unlock: a load-back reads them after other admissions of its step may have
  // stored (and evicted) in between. REQUIRES: match(keys, pages) == pages.
  void lock(std::span<const uint64_t> keys, int64_t pages, uint64_t tick, std::vector<PageId>& slots);
  void unlock(std::span<const PageId> slots);
  // Stores the path keys (root first): pages already held are touched, missing ones written, evicting
  // least recently used unheld host pages off the path. When the tier cannot hold it all, the longest
  // prefix that fits is stored. Returns the pages written (the last ones of the stored prefix); with slots,
  // sets it to the slot of every page of the stored prefix, root first.
  int64_t store(std::span<const uint64_t> keys, uint64_t tick, std::vector<PageId>* slots = nullptr);
  // Tree integrity and slot conservation (every slot free or in the tree, exactly once); held[s] is the
  // number of locks on slot s that are expected (empty: none).
  bool check(std::string* why, std::span<const int32_t> held = {}) const;

 private:
  PagePool pool_;
  RadixCache tree_;
  std::vector<PageId> path_;
  std::vector<PageId> scratch_;
  int64_t evicted_pages_ = 0;
};

}  // namespace tokenline
