#include "engine/core/radix_cache.h"

#include <algorithm>
#include <cassert>

namespace tokenline {

namespace {
constexpr size_t kInitialIndexSlots = 1024;  // power of two; doubles at half load
}  // namespace

size_t RadixCache::ChildIndex::home(int32_t parent, uint64_t key) const {
  uint64_t x = key ^ (static_cast<uint64_t>(static_cast<uint32_t>(parent)) * 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ULL;
  return static_cast<size_t>(x ^ (x >> 29)) & (slots_.size() - 1);
}

int32_t RadixCache::ChildIndex::find(int32_t parent, uint64_t key) const {
  if (slots_.empty()) return -1;
  const size_t mask = slots_.size() - 1;
  for (size_t i = home(parent, key);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.node < 0) return -1;
    if (slot.key == key && slot.parent == parent) return slot.node;
  }
}

void RadixCache::ChildIndex::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? kInitialIndexSlots : 2 * old.size(), Slot{});
  size_ = 0;
  for (const Slot& slot : old)
    if (slot.node >= 0) insert(slot.parent, slot.key, slot.node);
}

void RadixCache::ChildIndex::insert(int32_t parent, uint64_t key, int32_t node) {
  if (2 * (size_ + 1) > static_cast<int64_t>(slots_.size())) grow();
  const size_t mask = slots_.size() - 1;
  size_t i = home(parent, key);
  while (slots_[i].node >= 0) i = (i + 1) & mask;
  slots_[i] = Slot{key, parent, node};
  ++size_;
}

void RadixCache::ChildIndex::erase(int32_t parent, uint64_t key) {
  const size_t mask = slots_.size() - 1;
  size_t i = home(parent, key);
  while (!(slots_[i].key == key && slots_[i].parent == parent)) i = (i + 1) & mask;
  // Backward shift: move later members of the probe run into the hole so lookups never stop early.
  for (size_t j = (i + 1) & mask; slots_[j].node >= 0; j = (j + 1) & mask) {
    const size_t h = home(slots_[j].parent, slots_[j].key);
    const bool movable = (j > i) ? (h <= i || h > j) : (h <= i && h > j);
    if (movable) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
  --size_;
}

// Nodes and the child index grow with what is cached, not with the pool: a pool of millions of pages
// that caches little stays small.
RadixCache::RadixCache(int64_t total_pages) : node_of_page_(static_cast<size_t>(total_pages), -1) {}

int32_t RadixCache::child(int32_t parent, uint64_t key) const {
  return children_.find(parent, key);
}

int32_t RadixCache::ref(PageId page) const {
  const int32_t node = node_of_page_[static_cast<size_t>(page)];
  return node < 0 ? 0 : nodes_[static_cast<size_t>(node)].ref;
}

PageId RadixCache::parent_page(PageId page) const {
  const int32_t parent = nodes_[static_cast<size_t>(node_of_page_[static_cast<size_t>(page)])].parent;
  return parent < 0 ? -1 : nodes_[static_cast<size_t>(parent)].page;
}

void RadixCache::walk(std::span<const uint64_t> keys, int64_t limit, PrefixMatch& m) const {
  int32_t node = m.last_node;
  for (int64_t i = m.pages; i < limit; ++i) {
    ++m.comparisons;
    const int32_t next = child(node, keys[static_cast<size_t>(i)]);
    if (next < 0) break;
    node = next;
    ++m.pages;
    if (nodes_[static_cast<size_t>(node)].ref == 0) ++m.unreferenced_pages;
  }
  m.last_node = node;
  m.generation = node < 0 ? 0 : nodes_[static_cast<size_t>(node)].generation;
}

PrefixMatch RadixCache::match(std::span<const uint64_t> keys, int64_t max_pages) const {
  PrefixMatch m;
  walk(keys, std::min<int64_t>(max_pages, static_cast<int64_t>(keys.size())), m);
  return m;
}

PrefixMatch RadixCache::extend(std::span<const uint64_t> keys, int64_t max_pages,
                               const PrefixMatch& previous) const {
  const int64_t limit = std::min<int64_t>(max_pages, static_cast<int64_t>(keys.size()));
  const int32_t last = previous.last_node;
  const bool intact =
      last >= 0 && static_cast<size_t>(last) < nodes_.size() && nodes_[static_cast<size_t>(last)].live &&
      nodes_[static_cast<size_t>(last)].generation == previous.generation && previous.pages <= limit;
  if (!intact) return match(keys, max_pages);
  PrefixMatch m;
  m.pages = previous.pages;
  m.last_node = last;
  walk(keys, limit, m);
  return m;
}

void RadixCache::lock(const PrefixMatch& match, uint64_t tick, std::vector<PageId>& out) {
  path_.clear();
  for (int32_t n = match.last_node; n >= 0; n = nodes_[static_cast<size_t>(n)].parent) path_.push_back(n);
  assert(static_cast<int64_t>(path_.size()) == match.pages && "lock of a stale match");
  for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
    Node& node = nodes_[static_cast<size_t>(*it)];
    if (node.ref++ == 0) --unreferenced_nodes_;
    node.tick = tick;
    out.push_back(node.page);
  }
}

int32_t RadixCache::new_node(int32_t parent, uint64_t key, PageId page, uint64_t tick) {
  int32_t id;
  if (!free_nodes_.empty()) {
    id = free_nodes_.back();
    free_nodes_.pop_back();
  } else {
    id = static_cast<int32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[static_cast<size_t>(id)] = Node{key, tick, parent, page, 1, 0, 1, ++generations_, true};
  if (parent >= 0) ++nodes_[static_cast<size_t>(parent)].children;
  children_.insert(parent, key, id);
  node_of_page_[static_cast<size_t>(page)] = id;
  ++live_nodes_;
  return id;
}

void RadixCache::insert(std::span<const uint64_t> keys, std::vector<PageId>& pages, int64_t held,
                        uint64_t tick, std::vector<PageId>& duplicates) {
  assert(keys.size() <= pages.size() && held <= static_cast<int64_t>(keys.size()));
  int32_t node = held > 0 ? node_of_page_[static_cast<size_t>(pages[static_cast<size_t>(held - 1)])] : -1;
  for (int64_t i = 0; i < held; ++i)  // SGLang's insert walks the held prefix too, counting a hit on each
    ++nodes_[static_cast<size_t>(node_of_page_[static_cast<size_t>(pages[static_cast<size_t>(i)])])].hits;
  bool fresh = false;  // below a node created here nothing exists yet: no lookups needed
  for (size_t i = static_cast<size_t>(held); i < keys.size(); ++i) {
    const int32_t existing = fresh ? -1 : child(node, keys[i]);
    if (existing >= 0) {
      Node& n = nodes_[static_cast<size_t>(existing)];
      if (n.ref++ == 0) --unreferenced_nodes_;
      n.tick = tick;
      ++n.hits;
      duplicates.push_back(pages[i]);
      pages[i] = n.page;
      node = existing;
    } else {
      node = new_node(node, keys[i], pages[i], tick);
      fresh = true;
    }
  }
}

bool RadixCache::evictable(int32_t node) const {
  const Node& n = nodes_[static_cast<size_t>(node)];
  return n.live && n.ref == 0 && n.children == 0;
}

void RadixCache::push_if_evictable(int32_t node) {
  if (evictable(node)) lru_.emplace(nodes_[static_cast<size_t>(node)].tick, node);
}

void RadixCache::release(PageId page) {
  const int32_t node = node_of_page_[static_cast<size_t>(page)];
  assert(node >= 0 && nodes_[static_cast<size_t>(node)].ref > 0 && "release of an unheld tree page");
  if (--nodes_[static_cast<size_t>(node)].ref == 0) {
    ++unreferenced_nodes_;
    push_if_evictable(node);
  }
}

int32_t RadixCache::hits(PageId page) const {
  const int32_t node = node_of_page_[static_cast<size_t>(page)];
  return node < 0 ? 0 : nodes_[static_cast<size_t>(node)].hits;
}

void RadixCache::append_path(int32_t node, std::vector<uint64_t>& paths, std::vector<PageId>* pages) const {
  const size_t begin = paths.size();
  for (int32_t n = node; n >= 0; n = nodes_[static_cast<size_t>(n)].parent)
    paths.push_back(nodes_[static_cast<size_t>(n)].key);
  std::reverse(paths.begin() + static_cast<std::ptrdiff_t>(begin), paths.end());
  if (pages == nullptr) return;
  const size_t first = pages->size();
  for (int32_t n = node; n >= 0; n = nodes_[static_cast<size_t>(n)].parent)
    pages->push_back(nodes_[static_cast<size_t>(n)].page);
  std::reverse(pages->begin() + static_cast<std::ptrdiff_t>(first), pages->end());
}

int64_t RadixCache::evict(int64_t n, std::vector<PageId>& freed, std::vector<uint64_t>* paths,
                          std::vector<size_t>* path_ends, std::vector<PageId>* path_pages) {
  int64_t evicted = 0;
  int32_t next = -1;         // a parent that became the least recently used leaf: evicted without a heap trip
  int32_t last_parent = -1;  // the parent of the node evicted last (paths: its path is already out)
  while (evicted < n) {
    int32_t id = next;
    next = -1;
    if (id < 0) {
      if (lru_.empty()) break;
      const auto [tick, top] = lru_.top();
      lru_.pop();
      if (!evictable(top) || nodes_[static_cast<size_t>(top)].tick != tick) continue;  // stale entry
      id = top;
    }
    // A node evicted right after its child has a path that is a prefix of the child's: already given.
    if (paths != nullptr && id != last_parent) {
      append_path(id, *paths, path_pages);
      path_ends->push_back(paths->size());
    }
    Node& node = nodes_[static_cast<size_t>(id)];
    last_parent = node.parent;
    children_.erase(node.parent, node.key);
    node_of_page_[static_cast<size_t>(node.page)] = -1;
    freed.push_back(node.page);
    node.live = false;
    free_nodes_.push_back(id);
    --live_nodes_;
    --unreferenced_nodes_;
    ++evicted;
    if (node.parent < 0) continue;
    Node& parent = nodes_[static_cast<size_t>(node.parent)];
    --parent.children;
    if (!evictable(node.parent)) continue;
    if (lru_.empty() || HeapEntry{parent.tick, node.parent} < lru_.top())
      next = node.parent;
    else
      lru_.emplace(parent.tick, node.parent);
  }
  if (next >= 0) lru_.emplace(nodes_[static_cast<size_t>(next)].tick, next);
  // Stale entries accumulate between evictions; rebuild when they dominate so memory stays bounded.
  if (lru_.size() > 2 * static_cast<size_t>(live_nodes_) + 1024) {
    decltype(lru_) fresh;
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (evictable(static_cast<int32_t>(i))) fresh.emplace(nodes_[i].tick, static_cast<int32_t>(i));
    lru_.swap(fresh);
  }
  return evicted;
}

bool RadixCache::check(std::string* why) const {
  auto fail = [why](std::string msg) {
    if (why) *why = "radix: " + std::move(msg);
    return false;
  };
  std::vector<int32_t> children(nodes_.size(), 0);
  int64_t live = 0, unreferenced = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (!n.live) continue;
    ++live;
    if (n.ref < 0) return fail("negative ref at node " + std::to_string(i));
    if (n.ref == 0) ++unreferenced;
    if (n.parent >= 0) {
      const Node& p = nodes_[static_cast<size_t>(n.parent)];
      if (!p.live) return fail("node " + std::to_string(i) + " has a dead parent");
      if (n.ref > p.ref) return fail("node " + std::to_string(i) + " is held more than its parent");
      ++children[static_cast<size_t>(n.parent)];
    }
    if (child(n.parent, n.key) != static_cast<int32_t>(i))
      return fail("child index misses node " + std::to_string(i));
    if (n.page < 0 || n.page >= static_cast<PageId>(node_of_page_.size()) ||
        node_of_page_[static_cast<size_t>(n.page)] != static_cast<int32_t>(i))
      return fail("page map disagrees at node " + std::to_string(i));
  }
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].live && nodes_[i].children != children[i])
      return fail("child count wrong at node " + std::to_string(i));
  if (children_.size() != live) return fail("child index size != live nodes");
  if (live != live_nodes_ || unreferenced != unreferenced_nodes_) return fail("node counters disagree");
  int64_t mapped = 0;
  for (int32_t node : node_of_page_) mapped += node >= 0 ? 1 : 0;
  if (mapped != live) return fail("page map size != live nodes");
  return true;
}

}  // namespace tokenline
