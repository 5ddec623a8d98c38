#include "engine/core/page_pool.h"

#include <cassert>

namespace tokenline {

PagePool::PagePool(int64_t total_pages) {
  assert(total_pages >= 0 && total_pages <= INT32_MAX && "page ids are int32");
  free_.reserve(static_cast<size_t>(total_pages));
  // Pushed high to low so that allocation from a fresh pool hands out 0, 1, 2, ...
  for (int64_t p = total_pages - 1; p >= 0; --p) free_.push_back(static_cast<PageId>(p));
  is_free_.assign(static_cast<size_t>(total_pages), 1);
}

void PagePool::allocate(int64_t n, std::vector<PageId>& out) {
  assert(n >= 0 && n <= free_pages() && "allocate beyond the free pages");
  for (int64_t i = 0; i < n; ++i) {
    PageId page = free_.back();
    free_.pop_back();
    is_free_[static_cast<size_t>(page)] = 0;
    out.push_back(page);
  }
}

void PagePool::release(PageId page) {
  assert(page >= 0 && page < total_pages() && !is_free(page) && "release of a free or unknown page");
  is_free_[static_cast<size_t>(page)] = 1;
  free_.push_back(page);
}

}  // namespace tokenline
