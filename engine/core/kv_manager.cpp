#include "engine/core/kv_manager.h"

#include <algorithm>
#include <cassert>

namespace tokenline {

std::string_view to_string(ReservationPolicy policy) {
  switch (policy) {
    case ReservationPolicy::kWholeRequest:
      return "whole_request";
    case ReservationPolicy::kIncremental:
      return "incremental";
    case ReservationPolicy::kEstimate:
      return "estimate";
  }
  return "?";
}

KvManager::KvManager(const KvConfig& config)
    : config_(config), pool_(config.total_pages), cache_(config.total_pages), state_(config.state_slots) {
  assert(config.page_tokens > 0 && "page_tokens must be positive");
  if ((config.page_tokens & (config.page_tokens - 1)) == 0) {
    page_shift_ = 0;
    while ((int64_t{1} << page_shift_) < config.page_tokens) ++page_shift_;
  }
  // A model with window layers runs without prefix hits: its window KV is not cached (docs/layers.md).
  if (config.window.active()) {
    window_.emplace(config.window, config.page_tokens);
    config_.prefix_cache = false;
  }
  if (config.host.pages > 0 && config_.prefix_cache) host_.emplace(config.host.pages);
}

KvManager::PageTable& KvManager::table(HolderId holder) {
  if (static_cast<size_t>(holder) >= tables_.size()) tables_.resize(static_cast<size_t>(holder) + 1);
  return tables_[static_cast<size_t>(holder)];
}

int64_t KvManager::releasable_pages(HolderId holder) const {
  if (!holds(holder)) return 0;
  const PageTable& t = tables_[static_cast<size_t>(holder)];
  int64_t n = static_cast<int64_t>(t.pages.size()) - t.cached;
  for (int64_t i = 0; i < t.cached; ++i) n += cache_.ref(t.pages[static_cast<size_t>(i)]) == 1 ? 1 : 0;
  return n;
}

PrefixMatch KvManager::match(std::span<const uint64_t> keys, int64_t max_pages) const {
  if (!config_.prefix_cache) return PrefixMatch{};
  PrefixMatch m = cache_.match(keys, max_pages);
  if (host_) m.host_pages = std::max<int64_t>(0, host_->match(keys, max_pages) - m.pages);
  return m;
}

PrefixMatch KvManager::extend(std::span<const uint64_t> keys, int64_t max_pages,
                              const PrefixMatch& previous) const {
  if (!config_.prefix_cache) return PrefixMatch{};
  PrefixMatch m = cache_.extend(keys, max_pages, previous);
  if (host_) m.host_pages = std::max<int64_t>(0, host_->match(keys, max_pages) - m.pages);
  return m;
}

void KvManager::admit(HolderId holder, const PrefixMatch& match, int64_t query_tokens,
                      std::span<const uint64_t> keys) {
  PageTable& t = table(holder);
  assert(!t.active && "admit of a holder that already holds pages");
  t.active = true;
  t.pages.clear();
  cache_.lock(match, ++tick_, t.pages);
  t.cached = match.pages;
  if (state_.enabled()) state_.take(holder);
  prefix_query_tokens_ += query_tokens;
  prefix_hit_tokens_ += (match.pages + match.host_pages) * config_.page_tokens;
  hash_comparisons_ += match.comparisons;
  if (match.host_pages > 0) {
    // The loaded pages are allocated by the grow() that follows (they are the first pages it adds): an
    // eviction here could drop a prefix another admission of the same step matched and has not locked yet.
    // The host path stays held until then: another admission's write-back may store (and evict) first.
    assert(host_ && static_cast<int64_t>(keys.size()) >= match.pages + match.host_pages);
    t.host_slots.clear();
    host_->lock(keys, match.pages + match.host_pages, ++tick_, t.host_slots);
    t.load_from = match.pages;
    host_hit_tokens_ += match.host_pages * config_.page_tokens;
    host_loaded_pages_ += match.host_pages;
  }
  note_usage();
}

bool KvManager::grow(HolderId holder, int64_t tokens) {
  PageTable& t = table(holder);
  t.active = true;
  const int64_t need = pages_needed(holder, tokens);
  if (window_) {  // the window pool first: a refusal there changes nothing
    if (need > available_pages() || !window_->grow(holder, tokens)) return false;
  }
  if (need == 0) return true;
  if (need > available_pages()) return false;
  if (need > pool_.free_pages()) evict(need - pool_.free_pages());
  pool_.allocate(need, t.pages);
  owned_pages_ += need;
  if (!t.host_slots.empty()) finish_load(t);
  note_usage();
  return true;
}

void KvManager::finish_load(PageTable& t) {
  assert(t.pages.size() >= t.host_slots.size() && "a host hit's pages not allocated with its first grow");
  if (config_.host.log_copies) {
    for (size_t i = static_cast<size_t>(t.load_from); i < t.host_slots.size(); ++i)
      copies_.push_back(TierCopy{.kind = TierCopy::Kind::kLoad, .hbm = t.pages[i], .host = t.host_slots[i]});
  }
  host_->unlock(t.host_slots);
  t.host_slots.clear();
}

void KvManager::log_stores(std::span<const PageId> path_pages, int64_t written) {
  assert(path_pages.size() == slot_scratch_.size() && static_cast<size_t>(written) <= path_pages.size());
  for (size_t i = path_pages.size() - static_cast<size_t>(written); i < path_pages.size(); ++i)
    copies_.push_back(
        TierCopy{.kind = TierCopy::Kind::kStore, .hbm = path_pages[i], .host = slot_scratch_[i]});
}

void KvManager::take_copies(std::vector<TierCopy>& out) {
  out.insert(out.end(), copies_.begin(), copies_.end());
  copies_.clear();
}

void KvManager::cache_pages(HolderId holder, std::span<const uint64_t> keys) {
  if (!config_.prefix_cache || !holds(holder)) return;
  PageTable& t = tables_[static_cast<size_t>(holder)];
  const size_t n = std::min(keys.size(), t.pages.size());
  if (static_cast<int64_t>(n) <= t.cached) return;
  scratch_.clear();
  cache_.insert(keys.first(n), t.pages, t.cached, ++tick_, scratch_);
  owned_pages_ -= static_cast<int64_t>(n) - t.cached;
  t.cached = static_cast<int64_t>(n);
  for (PageId dup : scratch_) pool_.release(dup);
  const int32_t threshold = host_ ? write_through_threshold(config_.host.write_policy) : 0;
  if (threshold > 0) {  // write-through backs up the inserted path's pages inserted often enough
    size_t backed = 0;  // a parent is inserted whenever a child is: the qualifying pages are a prefix
    while (backed < n && cache_.hits(t.pages[backed]) >= threshold) ++backed;
    const bool log = config_.host.log_copies;
    const int64_t written = host_->store(keys.first(backed), ++tick_, log ? &slot_scratch_ : nullptr);
    host_written_pages_ += written;
    pending_async_store_pages_ += written;
    if (log) log_stores(std::span<const PageId>(t.pages).first(slot_scratch_.size()), written);
  }
}

void KvManager::release(HolderId holder) {
  if (window_) window_->release(holder);
  if (!holds(holder)) return;
  PageTable& t = tables_[static_cast<size_t>(holder)];
  if (!t.host_slots.empty()) {  // admitted, never grown: its load-back is dropped
    host_->unlock(t.host_slots);
    t.host_slots.clear();
  }
  for (size_t i = 0; i < t.pages.size(); ++i) {
    if (static_cast<int64_t>(i) < t.cached) {
      cache_.release(t.pages[i]);
    } else {
      pool_.release(t.pages[i]);
      --owned_pages_;
    }
  }
  t.pages.clear();
  t.cached = 0;
  t.active = false;
  state_.give(holder);
}

int64_t KvManager::evict(int64_t pages) {
  scratch_.clear();
  const bool write_back = host_ && config_.host.write_policy == WritePolicy::kWriteBack;
  evicted_paths_.clear();
  evicted_path_ends_.clear();
  evicted_path_pages_.clear();
  const bool log = write_back && config_.host.log_copies;
  const int64_t n = write_back ? cache_.evict(pages, scratch_, &evicted_paths_, &evicted_path_ends_,
                                              log ? &evicted_path_pages_ : nullptr)
                               : cache_.evict(pages, scratch_);
  for (PageId page : scratch_) pool_.release(page);
  evicted_pages_ += n;
  size_t begin = 0;
  for (size_t end : evicted_path_ends_) {
    const std::span<const uint64_t> path(evicted_paths_.data() + begin, end - begin);
    const int64_t written = host_->store(path, ++tick_, log ? &slot_scratch_ : nullptr);
    if (log)
      log_stores(std::span<const PageId>(evicted_path_pages_).subspan(begin, slot_scratch_.size()), written);
    host_written_pages_ += written;
    pending_store_pages_ += written;
    begin = end;
  }
  return n;
}

void KvManager::note_usage() {
  const int64_t used = pool_.total_pages() - available_pages();
  peak_used_pages_ = std::max(peak_used_pages_, used);
}

KvCounters KvManager::counters() const {
  KvCounters c;
  c.total_pages = pool_.total_pages();
  c.free_pages = pool_.free_pages();
  c.owned_pages = owned_pages_;
  c.cached_pages = cache_.cached_pages();
  c.evictable_pages = cache_.evictable_pages();
  c.used_pages = c.total_pages - c.free_pages - c.evictable_pages;
  c.peak_used_pages = peak_used_pages_;
  c.used_main_bytes = c.used_pages * config_.main_bytes_per_page;
  c.used_indexer_bytes = c.used_pages * config_.indexer_bytes_per_page;
  c.prefix_query_tokens = prefix_query_tokens_;
  c.prefix_hit_tokens = prefix_hit_tokens_;
  c.hash_comparisons = hash_comparisons_;
  c.evicted_pages = evicted_pages_;
  if (host_) {
    c.host_total_pages = host_->total_pages();
    c.host_cached_pages = host_->cached_pages();
    c.host_hit_tokens = host_hit_tokens_;
    c.host_loaded_pages = host_loaded_pages_;
    c.host_written_pages = host_written_pages_;
    c.host_evicted_pages = host_->evicted_pages();
    c.host_loaded_bytes = host_loaded_pages_ * config_.transfer_bytes_per_page();
    c.host_written_bytes = host_written_pages_ * config_.transfer_bytes_per_page();
  }
  c.state_total_slots = state_.total_slots();
  c.state_used_slots = state_.used_slots();
  c.state_peak_used_slots = state_.peak_used_slots();
  c.state_used_bytes = c.state_used_slots * config_.state_bytes_per_slot;
  if (window_) c.window = window_->counters();
  return c;
}

bool KvManager::check(std::string* why) const {
  auto fail = [why](std::string msg) {
    if (why) *why = "kv: " + std::move(msg);
    return false;
  };
  if (!cache_.check(why)) return false;
  if (host_) {
    std::vector<int32_t> held(static_cast<size_t>(host_->total_pages()), 0);  // by pending load-backs
    for (const PageTable& t : tables_)
      for (PageId slot : t.host_slots) ++held[static_cast<size_t>(slot)];
    if (!host_->check(why, held)) return false;
  }
  if (!state_.check(why)) return false;
  if (state_.enabled()) {
    for (size_t h = 0; h < tables_.size(); ++h)
      if (tables_[h].active != state_.holds(static_cast<HolderId>(h)))
        return fail(
            "holder " + std::to_string(h) +
            (tables_[h].active ? " holds pages and no state slot" : " holds a state slot and no pages"));
    int64_t active = 0;  // a slot held beyond the tables is a holder without one
    for (const PageTable& t : tables_) active += t.active ? 1 : 0;
    if (active != state_.used_slots()) return fail("state slots held by holders without page tables");
  }
  if (window_ && !window_->check(why)) return false;
  if (window_) {
    for (HolderId h = 0; h < static_cast<HolderId>(std::max<size_t>(tables_.size(), 1)); ++h)
      if (window_->held_pages(h) > 0 && !holds(h))
        return fail("holder " + std::to_string(h) + " holds window pages but no page table");
  }
  const size_t total = static_cast<size_t>(pool_.total_pages());
  std::vector<int32_t> owners(total, 0);   // page tables holding the page as owned
  std::vector<int32_t> holders(total, 0);  // page tables holding the page as cached
  int64_t owned = 0;
  for (size_t h = 0; h < tables_.size(); ++h) {
    const PageTable& t = tables_[h];
    if (!t.active) {
      if (!t.pages.empty()) return fail("inactive holder " + std::to_string(h) + " has pages");
      continue;
    }
    if (t.cached > static_cast<int64_t>(t.pages.size()))
      return fail("holder " + std::to_string(h) + " cached > pages");
    for (size_t i = 0; i < t.pages.size(); ++i) {
      const PageId p = t.pages[i];
      if (p < 0 || static_cast<size_t>(p) >= total)
        return fail("holder " + std::to_string(h) + " has a bad page id");
      if (static_cast<int64_t>(i) < t.cached) {
        if (!cache_.contains(p)) return fail("holder " + std::to_string(h) + " cached page not in tree");
        if (cache_.parent_page(p) != (i == 0 ? PageId{-1} : t.pages[i - 1]))
          return fail("holder " + std::to_string(h) + " cached pages are not a tree path");
        ++holders[static_cast<size_t>(p)];
      } else {
        ++owners[static_cast<size_t>(p)];
        ++owned;
      }
    }
  }
  for (size_t p = 0; p < total; ++p) {
    const PageId page = static_cast<PageId>(p);
    const int states =
        (pool_.is_free(page) ? 1 : 0) + (owners[p] > 0 ? 1 : 0) + (cache_.contains(page) ? 1 : 0);
    if (states != 1)
      return fail("page " + std::to_string(p) + " is in " + std::to_string(states) + " states");
    if (owners[p] > 1) return fail("page " + std::to_string(p) + " owned twice");
    if (cache_.contains(page) && cache_.ref(page) != holders[p])
      return fail("page " + std::to_string(p) + " ref " + std::to_string(cache_.ref(page)) + " != holders " +
                  std::to_string(holders[p]));
  }
  if (owned != owned_pages_) return fail("owned counter disagrees");
  if (pool_.free_pages() + owned + cache_.cached_pages() != pool_.total_pages())
    return fail("pages not conserved");
  return true;
}

}  // namespace tokenline
