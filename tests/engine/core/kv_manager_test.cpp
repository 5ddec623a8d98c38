#include "engine/core/kv_manager.h"

#include <catch2/catch.hpp>

namespace tokenline {

namespace {
constexpr int64_t kPage = 64;
// GLM-5.3 on fp8_ds_mla (the seed): 656 B per token per layer over 78 layers of main KV; the DSA indexer
// cache is 132 B per token per layer (128 B FP8 key + 4 B scale) over the 21 layers that own an indexer.
constexpr int64_t kMainBytesPerTokenLayer = 656;
constexpr int64_t kMainLayers = 78;
constexpr int64_t kIndexerBytesPerTokenLayer = 132;
constexpr int64_t kIndexerLayers = 21;
constexpr int64_t kOneMillionTokens = int64_t{1} << 20;

std::vector<uint64_t> keys(uint64_t base, int64_t n) {
  std::vector<uint64_t> k;
  for (int64_t i = 0; i < n; ++i) k.push_back(base + static_cast<uint64_t>(i));
  return k;
}
}  // namespace

TEST_CASE("A 1M-token request's pages cost ~57 GB of main KV plus indexer cache", "[core][kv_manager]") {
  KvConfig config;
  config.page_tokens = kPage;
  config.total_pages = kOneMillionTokens / kPage;
  config.main_bytes_per_page = kMainBytesPerTokenLayer * kMainLayers * kPage;
  config.indexer_bytes_per_page = kIndexerBytesPerTokenLayer * kIndexerLayers * kPage;
  KvManager kv(config);
  kv.admit(0, PrefixMatch{}, kOneMillionTokens);
  REQUIRE(kv.grow(0, kOneMillionTokens));
  const KvCounters c = kv.counters();
  REQUIRE(c.used_pages == kOneMillionTokens / kPage);
  REQUIRE(c.free_pages == 0);
  const double total_gb = static_cast<double>(c.used_main_bytes + c.used_indexer_bytes) / 1e9;
  // The seed: 53.7 GB main KV + 2.9 GB indexer = 56.6 GB, "the 57 GB".
  CHECK(static_cast<double>(c.used_main_bytes) / 1e9 == Approx(53.7).margin(0.05));
  CHECK(static_cast<double>(c.used_indexer_bytes) / 1e9 == Approx(2.9).margin(0.05));
  CHECK(total_gb == Approx(56.6).margin(0.1));
  // One more token does not fit.
  REQUIRE_FALSE(kv.grow(0, kOneMillionTokens + 1));
  std::string why;
  REQUIRE(kv.check(&why));
}

TEST_CASE("KvManager caches prompt pages, shares them, and evicts under pressure", "[core][kv_manager]") {
  KvConfig config;
  config.page_tokens = kPage;
  config.total_pages = 10;
  KvManager kv(config);
  std::string why;
  const auto prompt = keys(100, 6);

  // Holder 0 writes 6 full pages plus part of a seventh, then caches the 6 full ones.
  kv.admit(0, kv.match(prompt, 6), 6 * kPage + 10);
  REQUIRE(kv.grow(0, 6 * kPage + 10));
  kv.cache_pages(0, prompt);
  REQUIRE(kv.check(&why));
  KvCounters c = kv.counters();
  REQUIRE(c.cached_pages == 6);
  REQUIRE(c.owned_pages == 1);

  // Holder 1 matches 4 of them (its limit) while 0 still holds them: no unreferenced pages to lock.
  PrefixMatch m = kv.match(prompt, 4);
  REQUIRE(m.pages == 4);
  REQUIRE(m.unreferenced_pages == 0);
  kv.admit(1, m, 5 * kPage);
  REQUIRE(kv.grow(1, 5 * kPage));
  REQUIRE(kv.held_pages(1) == 5);
  REQUIRE(kv.check(&why));
  // Releasing 0 frees its owned page; its two unshared cached pages become evictable.
  REQUIRE(kv.releasable_pages(0) == 1 + 2);
  kv.release(0);
  c = kv.counters();
  REQUIRE(c.evictable_pages == 2);
  REQUIRE(c.free_pages == 10 - 6 - 1);
  REQUIRE(kv.available_pages() == 5);
  // Growing 1 by five pages needs both evictable pages.
  REQUIRE(kv.grow(1, 10 * kPage));
  REQUIRE(kv.counters().evicted_pages == 2);
  REQUIRE(kv.available_pages() == 0);
  REQUIRE(kv.check(&why));
  kv.release(1);
  REQUIRE(kv.check(&why));
  c = kv.counters();
  REQUIRE(c.owned_pages == 0);
  REQUIRE(c.free_pages + c.cached_pages == 10);
  REQUIRE(c.prefix_hit_tokens == 4 * kPage);
  REQUIRE(c.hash_comparisons == 1 + 4);  // holder 0's first lookup missed; holder 1 matched 4
}

TEST_CASE("KvManager with the prefix cache off never matches or caches", "[core][kv_manager]") {
  KvConfig config;
  config.total_pages = 4;
  config.prefix_cache = false;
  KvManager kv(config);
  const auto k = keys(1, 2);
  kv.admit(0, kv.match(k, 2), 2 * kPage);
  REQUIRE(kv.grow(0, 2 * kPage));
  kv.cache_pages(0, k);
  kv.release(0);
  REQUIRE(kv.counters().free_pages == 4);
  REQUIRE(kv.match(k, 2).pages == 0);
  std::string why;
  REQUIRE(kv.check(&why));
}

}  // namespace tokenline
