#include "engine/core/kv_tier.h"

#include <catch2/catch.hpp>

#include "engine/core/kv_manager.h"

namespace tokenline {

namespace {
constexpr int64_t kPage = 64;

std::vector<uint64_t> keys(uint64_t base, int64_t n) {
  std::vector<uint64_t> k;
  for (int64_t i = 0; i < n; ++i) k.push_back(base + static_cast<uint64_t>(i));
  return k;
}

KvConfig tiered(int64_t hbm_pages, int64_t host_pages, WritePolicy policy) {
  KvConfig c;
  c.page_tokens = kPage;
  c.total_pages = hbm_pages;
  c.main_bytes_per_page = 1000;
  c.host = HostTierConfig{.pages = host_pages, .write_policy = policy};
  return c;
}

// Admits holder with prompt, writes it and caches its full pages; then releases it.
void serve(KvManager& kv, HolderId holder, const std::vector<uint64_t>& prompt) {
  const int64_t tokens = static_cast<int64_t>(prompt.size()) * kPage;
  kv.admit(holder, kv.match(prompt, static_cast<int64_t>(prompt.size())), tokens, prompt);
  REQUIRE(kv.grow(holder, tokens));
  kv.cache_pages(holder, prompt);
  kv.release(holder);
  std::string why;
  const bool ok = kv.check(&why);
  INFO(why);
  REQUIRE(ok);
}
}  // namespace

TEST_CASE("HostTier stores paths, matches prefixes and evicts least recently used leaves",
          "[core][kv_tier]") {
  HostTier host(6);
  const auto a = keys(100, 4);
  const auto b = keys(200, 4);
  CHECK(host.store(a, 1) == 4);
  CHECK(host.store(a, 2) == 0);  // already held: touched, not written
  CHECK(host.match(a, 4) == 4);
  CHECK(host.match(a, 2) == 2);
  // b needs 4 slots, 2 are free: a's two deepest pages (its LRU leaves) make room.
  CHECK(host.store(b, 3) == 4);
  CHECK(host.evicted_pages() == 2);
  CHECK(host.match(a, 4) == 2);
  CHECK(host.match(b, 4) == 4);
  std::string why;
  REQUIRE(host.check(&why));
  // A path longer than the tier keeps the prefix that fits.
  HostTier small(3);
  CHECK(small.store(keys(300, 5), 1) == 3);
  CHECK(small.match(keys(300, 5), 5) == 3);
  REQUIRE(small.check(&why));
}

TEST_CASE("A prefix evicted from HBM is found in host and loaded back as owned pages", "[core][kv_tier]") {
  KvManager kv(tiered(8, 16, WritePolicy::kWriteThrough));
  const auto a = keys(100, 6);
  const auto b = keys(200, 6);
  serve(kv, 0, a);
  KvCounters c = kv.counters();
  CHECK(c.host_written_pages == 6);  // write-through: backed up at insert
  serve(kv, 1, b);                   // evicts 4 of a's pages from HBM (8 pages hold 6 + 2)
  c = kv.counters();
  CHECK(c.evicted_pages == 4);
  CHECK(c.host_written_pages == 12);
  const PrefixMatch m = kv.match(a, 6);
  CHECK(m.pages == 2);       // a's first two pages are still in HBM
  CHECK(m.host_pages == 4);  // the rest only in host
  kv.admit(2, m, 6 * kPage, a);
  c = kv.counters();
  CHECK(c.host_loaded_pages == 4);
  CHECK(c.host_hit_tokens == 4 * kPage);
  CHECK(c.prefix_hit_tokens == 2 * kPage + 4 * kPage);
  CHECK(kv.held_pages(2) == 2);  // the tree pages; grow allocates the pages the load fills
  REQUIRE(kv.grow(2, 6 * kPage));
  c = kv.counters();
  CHECK(kv.held_pages(2) == 6);  // 2 tree pages + 4 loaded pages it owns until it caches them
  CHECK(c.owned_pages == 4);
  std::string why;
  REQUIRE(kv.check(&why));
  kv.cache_pages(2, a);
  kv.release(2);
  REQUIRE(kv.check(&why));
  CHECK(kv.match(a, 6).pages == 6);
}

TEST_CASE("write_back writes only what HBM evicts and leaves the writes for the next step",
          "[core][kv_tier]") {
  KvManager kv(tiered(8, 16, WritePolicy::kWriteBack));
  serve(kv, 0, keys(100, 6));
  CHECK(kv.counters().host_written_pages == 0);
  serve(kv, 1, keys(200, 6));
  const KvCounters c = kv.counters();
  CHECK(c.evicted_pages == 4);
  // The evicted leaves' paths go to host whole: a's 6 pages (the 2 still in HBM are its ancestors).
  CHECK(c.host_written_pages == 6);
  CHECK(kv.pending_store_pages() == 6);
  kv.take_pending_store(6);
  CHECK(kv.pending_store_pages() == 0);
  CHECK(kv.match(keys(100, 6), 6).host_pages == 4);
}

TEST_CASE("write_through_selective backs a prefix up on its second insert only", "[core][kv_tier]") {
  KvManager kv(tiered(32, 32, WritePolicy::kWriteThroughSelective));
  const auto a = keys(100, 4);
  serve(kv, 0, a);
  CHECK(kv.counters().host_written_pages == 0);
  // A second request shares a's first 2 pages and adds 2: the shared ones reach 2 inserts.
  std::vector<uint64_t> b(a.begin(), a.begin() + 2);
  b.push_back(900);
  b.push_back(901);
  serve(kv, 1, b);
  CHECK(kv.counters().host_written_pages == 2);
}

TEST_CASE("The host tier is off without host pages or without the prefix cache", "[core][kv_tier]") {
  KvManager none(tiered(8, 0, WritePolicy::kWriteThrough));
  CHECK_FALSE(none.has_host_tier());
  KvConfig off = tiered(8, 16, WritePolicy::kWriteThrough);
  off.prefix_cache = false;
  CHECK_FALSE(KvManager(off).has_host_tier());
  CHECK(KvManager(tiered(8, 16, WritePolicy::kWriteBack)).has_host_tier());
}

}  // namespace tokenline
