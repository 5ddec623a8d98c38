#include "engine/core/kv_tier.h"

#include <algorithm>
#include <cassert>

namespace tokenline {

std::string_view to_string(WritePolicy policy) {
  switch (policy) {
    case WritePolicy::kWriteThrough:
      return "write_through";
    case WritePolicy::kWriteThroughSelective:
      return "write_through_selective";
    case WritePolicy::kWriteBack:
      return "write_back";
  }
  return "?";
}

int32_t write_through_threshold(WritePolicy policy) {
  switch (policy) {
    case WritePolicy::kWriteThrough:
      return 1;
    case WritePolicy::kWriteThroughSelective:
      return 2;
    case WritePolicy::kWriteBack:
      return 0;
  }
  return 0;
}

HostTier::HostTier(int64_t pages) : pool_(pages), tree_(pages) {}

int64_t HostTier::match(std::span<const uint64_t> keys, int64_t max_pages) const {
  return tree_.match(keys, max_pages).pages;
}

void HostTier::lock(std::span<const uint64_t> keys, int64_t pages, uint64_t tick,
                    std::vector<PageId>& slots) {
  const PrefixMatch m = tree_.match(keys, pages);
  assert(m.pages == pages && "host lock of pages the tier does not hold");
  tree_.lock(m, tick, slots);
}

void HostTier::unlock(std::span<const PageId> slots) {
  for (PageId p : slots) tree_.release(p);
}

int64_t HostTier::store(std::span<const uint64_t> keys, uint64_t tick, std::vector<PageId>* slots) {
  const PrefixMatch m = tree_.match(keys, static_cast<int64_t>(keys.size()));
  path_.clear();
  tree_.lock(m, tick, path_);  // held: the path's own pages cannot be evicted to make room for its tail
  const int64_t room = pool_.free_pages() + tree_.evictable_pages();
  const int64_t written = std::min(static_cast<int64_t>(keys.size()) - m.pages, room);
  if (written > pool_.free_pages()) {
    scratch_.clear();
    evicted_pages_ += tree_.evict(written - pool_.free_pages(), scratch_);
    for (PageId p : scratch_) pool_.release(p);
  }
  pool_.allocate(written, path_);
  scratch_.clear();
  tree_.insert(keys.first(static_cast<size_t>(m.pages + written)), path_, m.pages, tick, scratch_);
  assert(scratch_.empty() && "host store of a page it already holds");
  for (PageId p : path_) tree_.release(p);
  if (slots != nullptr) slots->assign(path_.begin(), path_.end());
  return written;
}

bool HostTier::check(std::string* why, std::span<const int32_t> held) const {
  if (!tree_.check(why)) {
    if (why) *why = "host tier: " + *why;
    return false;
  }
  for (PageId p = 0; p < static_cast<PageId>(pool_.total_pages()); ++p) {
    const int states = (pool_.is_free(p) ? 1 : 0) + (tree_.contains(p) ? 1 : 0);
    if (states != 1) {
      if (why) *why = "host tier: slot " + std::to_string(p) + " is in " + std::to_string(states) + " states";
      return false;
    }
    const int32_t expected = static_cast<size_t>(p) < held.size() ? held[static_cast<size_t>(p)] : 0;
    if (tree_.contains(p) && tree_.ref(p) != expected) {
      if (why)
        *why = "host tier: slot " + std::to_string(p) + " held " + std::to_string(tree_.ref(p)) +
               " times, expected " + std::to_string(expected);
      return false;
    }
  }
  return true;
}

}  // namespace tokenline
