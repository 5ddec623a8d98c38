// RadixCache: the prefix cache at page granularity. Each node is one full page named by its page key under
// its parent; a node's ref is the number of page tables holding its page. Unreferenced leaves are evicted
// LRU (ticks are logical, supplied by the caller). Owned by one KvManager; it never allocates pages itself.
#pragma once

#include <cstdint>
#include <queue>
#include <span>
#include <string>
#include <vector>

#include "engine/core/page_pool.h"

namespace tokenline {

struct PrefixMatch {
  int64_t pages = 0;               // pages of the longest cached prefix
  int64_t unreferenced_pages = 0;  // of them, pages nobody holds now (evictable until someone locks them)
  int64_t comparisons = 0;         // page-key lookups made: the CPU cost of the hit
  int32_t last_node = -1;          // deepest matched node; -1 for no match
  uint64_t generation = 0;         // last_node's generation: tells a reused node id from the matched one
  int64_t host_pages = 0;  // KvManager's host tier: pages after `pages` found only there (to load back)
};

class RadixCache {
 public:
  explicit RadixCache(int64_t total_pages);

  // Longest prefix of keys (at most max_pages of them) present in the tree. Const; no LRU touch.
  PrefixMatch match(std::span<const uint64_t> keys, int64_t max_pages) const;
  // match() resumed from an earlier result of the same keys when its last node is still cached (eviction
  // removes leaves only, so its whole path is); otherwise from the root. Counts only the new lookups.
  PrefixMatch extend(std::span<const uint64_t> keys, int64_t max_pages, const PrefixMatch& previous) const;
  // Takes a reference on every page of a match (root to last_node) and appends them to out, root first.
  void lock(const PrefixMatch& match, uint64_t tick, std::vector<PageId>& out);
  // Hands pages[held, keys.size()) (owned by the caller, not in the tree) to the tree, the caller keeping
  // a reference. REQUIRES pages[0, held) are tree pages the caller holds, on the path of keys. Where a node
  // already exists the caller's page is a duplicate: it is replaced in pages by the tree's and appended
  // to duplicates for the caller to free.
  void insert(std::span<const uint64_t> keys, std::vector<PageId>& pages, int64_t held, uint64_t tick,
              std::vector<PageId>& duplicates);
  // Drops one reference on a tree page.
  void release(PageId page);
  // Evicts up to n unreferenced leaves, least recently used first; appends their pages to freed. With
  // paths, also appends each evicted page's key path (root first) to it and the path's end to path_ends
  // (a host tier's write-back stores them); with path_pages, each path key's page too (an engine copies
  // their bytes; the evicted ones are in freed and stay unallocated until the caller reuses them).
  int64_t evict(int64_t n, std::vector<PageId>& freed, std::vector<uint64_t>* paths = nullptr,
                std::vector<size_t>* path_ends = nullptr, std::vector<PageId>* path_pages = nullptr);
  // Times page was inserted (a re-insert of an existing prefix counts): write_through_selective's count.
  int32_t hits(PageId page) const;

  bool contains(PageId page) const { return node_of_page_[static_cast<size_t>(page)] >= 0; }
  int32_t ref(PageId page) const;
  // The page of page's parent node, -1 at the root. REQUIRES contains(page).
  PageId parent_page(PageId page) const;
  int64_t cached_pages() const { return live_nodes_; }
  int64_t evictable_pages() const { return unreferenced_nodes_; }
  // Tree integrity: parent/child links, the child index, node<->page maps, counters. False + why on failure.
  bool check(std::string* why) const;

 private:
  struct Node {
    uint64_t key = 0;
    uint64_t tick = 0;
    int32_t parent = -1;
    PageId page = -1;
    int32_t ref = 0;
    int32_t children = 0;
    int32_t hits = 0;  // inserts of this node's page (first one included)
    uint64_t generation = 0;
    bool live = false;
  };
  // (parent node, page key) -> child node: open addressing with linear probing and backward-shift
  // deletion (no tombstones), so a lookup is about one cache miss even with millions of cached pages.
  class ChildIndex {
   public:
    int32_t find(int32_t parent, uint64_t key) const;
    void insert(int32_t parent, uint64_t key, int32_t node);  // REQUIRES: absent
    void erase(int32_t parent, uint64_t key);                 // REQUIRES: present
    int64_t size() const { return size_; }

   private:
    struct Slot {
      uint64_t key = 0;
      int32_t parent = 0;
      int32_t node = -1;  // -1: empty
    };
    size_t home(int32_t parent, uint64_t key) const;
    void grow();
    std::vector<Slot> slots_;
    int64_t size_ = 0;
  };
  using HeapEntry = std::pair<uint64_t, int32_t>;  // (tick, node): LRU first, ties by node id

  int32_t child(int32_t parent, uint64_t key) const;
  void walk(std::span<const uint64_t> keys, int64_t limit, PrefixMatch& m) const;
  int32_t new_node(int32_t parent, uint64_t key, PageId page, uint64_t tick);
  void push_if_evictable(int32_t node);
  bool evictable(int32_t node) const;
  void append_path(int32_t node, std::vector<uint64_t>& paths, std::vector<PageId>* pages) const;

  std::vector<Node> nodes_;
  std::vector<int32_t> free_nodes_;
  std::vector<int32_t> node_of_page_;  // per page: its node, or -1
  ChildIndex children_;
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<>> lru_;
  std::vector<int32_t> path_;  // scratch for lock
  int64_t live_nodes_ = 0;
  int64_t unreferenced_nodes_ = 0;
  uint64_t generations_ = 0;
};

}  // namespace tokenline
