#include "engine/core/request.h"

#include <catch2/catch.hpp>

namespace tokenline {

namespace {
constexpr int64_t kPage = 64;
constexpr int64_t kBlock = 512;  // Mooncake hash_ids block
constexpr int64_t kPagesPerBlock = kBlock / kPage;
}  // namespace

TEST_CASE("Block hashes map to page keys: one key per full page, shared prefixes share keys",
          "[core][request]") {
  RequestSpec a;
  a.id = 1;
  a.prompt_tokens = 2 * kBlock + 100;  // two full blocks and a partial third
  a.block_hashes = {11, 12, 13};
  RequestSpec b = a;
  b.id = 2;
  b.block_hashes = {11, 99, 98};
  const auto ka = derive_page_keys(a, kPage);
  const auto kb = derive_page_keys(b, kPage);
  REQUIRE(static_cast<int64_t>(ka.size()) == a.prompt_tokens / kPage);
  // The first block is shared: its pages' keys agree; from the second block on they differ.
  for (int64_t p = 0; p < kPagesPerBlock; ++p)
    REQUIRE(ka[static_cast<size_t>(p)] == kb[static_cast<size_t>(p)]);
  for (size_t p = kPagesPerBlock; p < ka.size(); ++p) REQUIRE(ka[p] != kb[p]);
  // Pages within a block get distinct keys.
  REQUIRE(ka[0] != ka[1]);
}

TEST_CASE("Token ids chain page keys, requests without identity get unique keys", "[core][request]") {
  RequestSpec a;
  a.id = 1;
  a.prompt_tokens = 3 * kPage;
  for (int64_t t = 0; t < a.prompt_tokens; ++t) a.token_ids.push_back(static_cast<int32_t>(t));
  RequestSpec b = a;
  b.token_ids[kPage + 5] = -7;  // differs in the second page
  const auto ka = derive_page_keys(a, kPage);
  const auto kb = derive_page_keys(b, kPage);
  REQUIRE(ka.size() == 3);
  REQUIRE(ka[0] == kb[0]);
  REQUIRE(ka[1] != kb[1]);
  REQUIRE(ka[2] != kb[2]);  // chained: a change propagates to every later page

  RequestSpec c;
  c.id = 3;
  c.prompt_tokens = 2 * kPage;
  RequestSpec d = c;
  d.id = 4;
  REQUIRE(derive_page_keys(c, kPage) != derive_page_keys(d, kPage));
  REQUIRE(derive_page_keys(c, kPage) == derive_page_keys(c, kPage));
}

}  // namespace tokenline
