#include "engine/core/radix_cache.h"

#include <catch2/catch.hpp>

namespace tokenline {

TEST_CASE("RadixCache matches, locks, inserts duplicates and evicts LRU leaves", "[core][radix_cache]") {
  RadixCache cache(16);
  std::string why;
  // Request A owns pages 0..3 for keys 1..4 and hands them to the tree (keeping its references).
  std::vector<uint64_t> keys_a = {1, 2, 3, 4};
  std::vector<PageId> pages_a = {0, 1, 2, 3};
  std::vector<PageId> dups;
  cache.insert(keys_a, pages_a, 0, 1, dups);
  REQUIRE(dups.empty());
  REQUIRE(cache.cached_pages() == 4);
  REQUIRE(cache.evictable_pages() == 0);
  REQUIRE(cache.check(&why));

  // B shares keys 1,2 then diverges: a match of 2 pages, 3 lookups (the third misses).
  std::vector<uint64_t> keys_b = {1, 2, 7};
  PrefixMatch m = cache.match(keys_b, 3);
  REQUIRE(m.pages == 2);
  REQUIRE(m.comparisons == 3);
  REQUIRE(m.unreferenced_pages == 0);
  // The limit caps the walk.
  REQUIRE(cache.match(keys_b, 1).pages == 1);

  // A releases everything: all four pages become evictable.
  for (PageId p : pages_a) cache.release(p);
  REQUIRE(cache.evictable_pages() == 4);
  REQUIRE(cache.check(&why));

  // B locks its 2-page prefix (now unreferenced), so only A's tail (keys 3,4) can be evicted.
  m = cache.match(keys_b, 3);
  REQUIRE(m.unreferenced_pages == 2);
  std::vector<PageId> pages_b;
  cache.lock(m, 2, pages_b);
  REQUIRE(pages_b == std::vector<PageId>{0, 1});
  std::vector<PageId> freed;
  REQUIRE(cache.evict(10, freed) == 2);
  REQUIRE(freed == std::vector<PageId>{3, 2});  // leaf first, then its parent became a leaf
  REQUIRE(cache.check(&why));

  // C computed keys 1,2 itself (pages 5,6) while B held them: its pages are duplicates.
  std::vector<uint64_t> keys_c = {1, 2};
  std::vector<PageId> pages_c = {5, 6};
  dups.clear();
  cache.insert(keys_c, pages_c, 0, 3, dups);
  REQUIRE(dups == std::vector<PageId>{5, 6});
  REQUIRE(pages_c == std::vector<PageId>{0, 1});
  REQUIRE(cache.ref(0) == 2);
  REQUIRE(cache.check(&why));
}

TEST_CASE("RadixCache evicts the least recently used leaf first", "[core][radix_cache]") {
  RadixCache cache(8);
  std::vector<PageId> dups;
  std::vector<uint64_t> k1 = {10}, k2 = {20}, k3 = {30};
  std::vector<PageId> p1 = {0}, p2 = {1}, p3 = {2};
  cache.insert(k1, p1, 0, /*tick=*/5, dups);
  cache.insert(k2, p2, 0, /*tick=*/3, dups);
  cache.insert(k3, p3, 0, /*tick=*/9, dups);
  cache.release(0);
  cache.release(1);
  cache.release(2);
  std::vector<PageId> freed;
  REQUIRE(cache.evict(2, freed) == 2);
  REQUIRE(freed == std::vector<PageId>{1, 0});
  std::string why;
  REQUIRE(cache.check(&why));
}

TEST_CASE("RadixCache::extend resumes a match while its node lives and restarts once it is evicted",
          "[core][radix_cache]") {
  RadixCache cache(8);
  std::vector<PageId> dups;
  const std::vector<uint64_t> query = {1, 2, 3, 4};
  std::vector<uint64_t> first = {1, 2};
  std::vector<PageId> pages = {0, 1};
  cache.insert(first, pages, 0, 1, dups);
  const PrefixMatch m1 = cache.match(query, 4);
  REQUIRE(m1.pages == 2);
  REQUIRE(m1.comparisons == 3);
  // The holder caches two more pages: extend looks up only past the old match.
  std::vector<uint64_t> longer = {1, 2, 3, 4};
  pages = {0, 1, 2, 3};
  cache.insert(longer, pages, 2, 2, dups);
  const PrefixMatch m2 = cache.extend(query, 4, m1);
  REQUIRE(m2.pages == 4);
  REQUIRE(m2.comparisons == 2);
  // Everything is released and evicted; a new prompt reuses the node ids: extend must start over.
  for (PageId p : pages) cache.release(p);
  std::vector<PageId> freed;
  REQUIRE(cache.evict(4, freed) == 4);
  std::vector<uint64_t> other = {9, 8, 7};
  std::vector<PageId> other_pages = {4, 5, 6};
  cache.insert(other, other_pages, 0, 3, dups);
  const PrefixMatch m3 = cache.extend(query, 4, m2);
  REQUIRE(m3.pages == 0);
  REQUIRE(m3.last_node == -1);
  std::string why;
  REQUIRE(cache.check(&why));
}

}  // namespace tokenline
