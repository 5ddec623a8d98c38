// PagePool: a fixed pool of KV pages (each page_tokens tokens) handed out by id. It only knows which
// pages are free; KvManager knows who holds the others. Not thread-safe; owned by one KvManager.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tokenline {

using PageId = int32_t;

class PagePool {
 public:
  explicit PagePool(int64_t total_pages);

  int64_t total_pages() const { return static_cast<int64_t>(is_free_.size()); }
  int64_t free_pages() const { return static_cast<int64_t>(free_.size()); }
  bool is_free(PageId page) const { return is_free_[static_cast<size_t>(page)] != 0; }

  // REQUIRES: n <= free_pages(). Appends n page ids to out. Lowest ids first from a fresh pool, then LIFO
  // (a freed page is reused first, as allocators do to keep hot pages hot); deterministic either way.
  void allocate(int64_t n, std::vector<PageId>& out);
  // REQUIRES: page is allocated.
  void release(PageId page);

 private:
  std::vector<PageId> free_;      // stack of free pages
  std::vector<uint8_t> is_free_;  // per page: 1 when on the free stack
};

}  // namespace tokenline
