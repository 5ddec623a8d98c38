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

namespace {

// A world that moves bytes as the real engine does: each HBM page and host slot holds the key last written
// to it (-1: never written).
struct PageBytes {
  std::vector<int64_t> hbm, host;
  int64_t loads = 0, stores = 0;
  void apply(const std::vector<TierCopy>& copies) {
    for (const TierCopy& c : copies) {
      auto& page = hbm.at(static_cast<size_t>(c.hbm));
      auto& slot = host.at(static_cast<size_t>(c.host));
      if (c.kind == TierCopy::Kind::kLoad) {
        page = slot;
        ++loads;
      } else {
        slot = page;
        ++stores;
      }
    }
  }
};

uint64_t next_random(uint64_t& state) {  // splitmix64: a test's own deterministic stream
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("Logged tier copies, made in order before each step, give every hit page its key's bytes",
          "[core][kv_tier]") {
  for (const WritePolicy policy :
       {WritePolicy::kWriteThrough, WritePolicy::kWriteThroughSelective, WritePolicy::kWriteBack}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      INFO(to_string(policy) << " seed " << seed);
      constexpr int64_t kHbm = 10, kHost = 16;
      KvConfig config = tiered(kHbm, kHost, policy);
      config.host.log_copies = true;
      KvManager kv(config);
      PageBytes bytes{std::vector<int64_t>(kHbm, -1), std::vector<int64_t>(kHost, -1)};
      uint64_t rng = seed;
      uint64_t fresh = 1'000'000;
      int64_t host_hits = 0;
      std::vector<TierCopy> copies;
      std::string why;
      for (int step = 0; step < 400; ++step) {
        // Up to two admissions a step, matched against the state before either (as Scheduler::plan),
        // then all admits, then all grows (as Scheduler::allocate), then the copies, then the forward.
        const int n = 1 + static_cast<int>(next_random(rng) % 2);
        std::vector<std::vector<uint64_t>> prompts(static_cast<size_t>(n));
        std::vector<PrefixMatch> matches;
        for (auto& p : prompts) {
          const uint64_t group = next_random(rng) % 4;
          const int64_t len = 2 + static_cast<int64_t>(next_random(rng) % 4);
          const int64_t shared = 1 + static_cast<int64_t>(next_random(rng) % static_cast<uint64_t>(len));
          for (int64_t i = 0; i < len; ++i)
            p.push_back(i < shared ? group * 1000 + static_cast<uint64_t>(i) : ++fresh);
          matches.push_back(kv.match(p, len));
        }
        for (int j = 0; j < n; ++j) {
          const auto& p = prompts[static_cast<size_t>(j)];
          kv.admit(j, matches[static_cast<size_t>(j)], static_cast<int64_t>(p.size()) * kPage, p);
          REQUIRE(kv.check(&why));
        }
        for (int j = 0; j < n; ++j) {
          REQUIRE(kv.grow(j, static_cast<int64_t>(prompts[static_cast<size_t>(j)].size()) * kPage));
          REQUIRE(kv.check(&why));
        }
        copies.clear();
        kv.take_copies(copies);
        bytes.apply(copies);
        for (int j = 0; j < n; ++j) {
          const auto& p = prompts[static_cast<size_t>(j)];
          const PrefixMatch& m = matches[static_cast<size_t>(j)];
          const std::span<const PageId> table = kv.page_table(j);
          host_hits += m.host_pages;
          for (int64_t i = 0; i < m.pages + m.host_pages; ++i) {
            INFO("step " << step << " request " << j << " page " << i << " of " << m.pages << " + "
                         << m.host_pages);
            CHECK(bytes.hbm[static_cast<size_t>(table[static_cast<size_t>(i)])] ==
                  static_cast<int64_t>(p[static_cast<size_t>(i)]));
          }
          for (size_t i = static_cast<size_t>(m.pages + m.host_pages); i < p.size(); ++i)
            bytes.hbm[static_cast<size_t>(table[i])] = static_cast<int64_t>(p[i]);  // the forward writes
        }
        for (int j = 0; j < n; ++j) {
          kv.cache_pages(j, prompts[static_cast<size_t>(j)]);
          kv.release(j);
          REQUIRE(kv.check(&why));
        }
        kv.take_pending_store(kv.pending_store_pages());
      }
      INFO("host hits " << host_hits << ", host evictions " << kv.counters().host_evicted_pages);
      CHECK(host_hits > 20);  // the tier was exercised: loads, stores and host evictions all ran
      CHECK(bytes.loads > 20);
      CHECK(bytes.stores > 10);
      // write_through_selective backs up only the groups' shared pages, which 16 slots nearly hold
      if (policy != WritePolicy::kWriteThroughSelective) CHECK(kv.counters().host_evicted_pages > 20);
      CHECK(bytes.loads == kv.counters().host_loaded_pages);
    }
  }
}

TEST_CASE("Without log_copies the tier decides the same and logs nothing", "[core][kv_tier]") {
  KvConfig logged = tiered(8, 16, WritePolicy::kWriteBack);
  logged.host.log_copies = true;
  KvManager a(logged), b(tiered(8, 16, WritePolicy::kWriteBack));
  for (KvManager* kv : {&a, &b}) {
    serve(*kv, 0, keys(100, 6));
    serve(*kv, 1, keys(200, 6));
    serve(*kv, 2, keys(100, 6));
  }
  std::vector<TierCopy> ca, cb;
  a.take_copies(ca);
  b.take_copies(cb);
  CHECK_FALSE(ca.empty());
  CHECK(cb.empty());
  CHECK(a.counters().host_loaded_pages == b.counters().host_loaded_pages);
  CHECK(a.counters().host_written_pages == b.counters().host_written_pages);
}

}  // namespace tokenline
