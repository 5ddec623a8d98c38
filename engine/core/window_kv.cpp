#include "engine/core/window_kv.h"

#include <algorithm>
#include <cassert>

namespace tokenline {

WindowKv::WindowKv(const WindowKvConfig& config, int64_t page_tokens)
    : config_(config), page_tokens_(page_tokens), pool_(config.total_pages) {
  assert(page_tokens > 0 && "page_tokens must be positive");
}

int64_t WindowKv::max_pages_per_request() const {
  return (config_.window_tokens + page_tokens_ - 1) / page_tokens_ + 1;
}

// The next query (position `tokens`) sees the W - 1 tokens before it; the last W tokens are kept, so the
// page of position tokens - W stays until the whole page has left the window.
int64_t WindowKv::first_kept_page(int64_t tokens) const {
  return std::max<int64_t>(0, tokens - config_.window_tokens) / page_tokens_;
}

int64_t WindowKv::first_kept_page(HolderId holder, int64_t tokens) const {
  if (!config_.hold_step_context || holder < 0) return first_kept_page(tokens);
  const int64_t covered =
      static_cast<size_t>(holder) < rings_.size() ? rings_[static_cast<size_t>(holder)].covered : 0;
  return first_kept_page(std::min(tokens, covered + 1));
}

std::span<const PageId> WindowKv::pages(HolderId holder) const {
  if (holder < 0 || static_cast<size_t>(holder) >= rings_.size()) return {};
  return rings_[static_cast<size_t>(holder)].pages;
}

int64_t WindowKv::first_page(HolderId holder) const {
  if (holder < 0 || static_cast<size_t>(holder) >= rings_.size()) return 0;
  return rings_[static_cast<size_t>(holder)].first;
}

int64_t WindowKv::pages_to_hold(int64_t tokens) const {
  if (tokens <= 0) return 0;
  return (tokens + page_tokens_ - 1) / page_tokens_ - first_kept_page(tokens);
}

int64_t WindowKv::held_pages(HolderId holder) const {
  return static_cast<size_t>(holder) < rings_.size()
             ? static_cast<int64_t>(rings_[static_cast<size_t>(holder)].pages.size())
             : 0;
}

// What growing holder to `tokens` takes from the pool (alloc) and gives back (drop: pages below the window).
void WindowKv::change(HolderId holder, int64_t tokens, int64_t& alloc, int64_t& drop) const {
  alloc = drop = 0;
  if (tokens <= 0) return;
  const int64_t end = (tokens + page_tokens_ - 1) / page_tokens_;
  const int64_t first = first_kept_page(holder, tokens);
  if (held_pages(holder) == 0) {
    alloc = end - first;
    return;
  }
  const Ring& r = rings_[static_cast<size_t>(holder)];
  const int64_t held_end = r.first + static_cast<int64_t>(r.pages.size());
  drop = std::clamp<int64_t>(first - r.first, 0, static_cast<int64_t>(r.pages.size()));
  alloc = std::max<int64_t>(0, end - std::max(held_end, first));
}

int64_t WindowKv::pages_needed(HolderId holder, int64_t tokens) const {
  int64_t alloc = 0, drop = 0;
  change(holder, tokens, alloc, drop);
  return std::max<int64_t>(0, alloc - drop);
}

bool WindowKv::grow(HolderId holder, int64_t tokens) {
  if (static_cast<size_t>(holder) >= rings_.size()) rings_.resize(static_cast<size_t>(holder) + 1);
  int64_t alloc = 0, drop = 0;
  change(holder, tokens, alloc, drop);
  if (alloc > pool_.free_pages() + drop) return false;
  Ring& r = rings_[static_cast<size_t>(holder)];
  const int64_t first = first_kept_page(holder, tokens);
  for (int64_t i = 0; i < drop; ++i) pool_.release(r.pages[static_cast<size_t>(i)]);  // back before taking
  r.pages.erase(r.pages.begin(), r.pages.begin() + drop);
  held_ -= drop;
  dropped_ += drop;
  r.first = r.pages.empty() ? first : r.first + drop;
  pool_.allocate(alloc, r.pages);
  r.covered = std::max(r.covered, tokens);
  held_ += alloc;
  peak_used_ = std::max(peak_used_, held_);
  return true;
}

void WindowKv::release(HolderId holder) {
  if (static_cast<size_t>(holder) >= rings_.size()) return;
  Ring& r = rings_[static_cast<size_t>(holder)];
  for (PageId p : r.pages) pool_.release(p);
  held_ -= static_cast<int64_t>(r.pages.size());
  r.pages.clear();
  r.first = 0;
  r.covered = 0;
}

WindowKvCounters WindowKv::counters() const {
  return {.total_pages = pool_.total_pages(),
          .used_pages = held_,
          .peak_used_pages = peak_used_,
          .used_bytes = held_ * config_.bytes_per_page,
          .dropped_pages = dropped_};
}

bool WindowKv::check(std::string* why) const {
  auto fail = [why](std::string msg) {
    if (why) *why = "window kv: " + std::move(msg);
    return false;
  };
  const size_t total = static_cast<size_t>(pool_.total_pages());
  std::vector<uint8_t> seen(total, 0);
  int64_t held = 0;
  for (size_t h = 0; h < rings_.size(); ++h) {
    const Ring& r = rings_[h];
    // hold_step_context: a prefill chunk's pages besides the window, bounded by the chunk, not W.
    if (!config_.hold_step_context && static_cast<int64_t>(r.pages.size()) > max_pages_per_request())
      return fail("holder " + std::to_string(h) + " holds " + std::to_string(r.pages.size()) +
                  " pages, more than the window's " + std::to_string(max_pages_per_request()));
    for (PageId p : r.pages) {
      if (p < 0 || static_cast<size_t>(p) >= total)
        return fail("holder " + std::to_string(h) + " bad page id");
      if (pool_.is_free(p)) return fail("page " + std::to_string(p) + " held and free");
      if (seen[static_cast<size_t>(p)]++ != 0) return fail("page " + std::to_string(p) + " held twice");
      ++held;
    }
  }
  if (held != held_) return fail("held counter disagrees");
  if (held + pool_.free_pages() != pool_.total_pages()) return fail("pages not conserved");
  return true;
}

}  // namespace tokenline
