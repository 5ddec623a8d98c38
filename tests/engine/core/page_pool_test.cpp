#include "engine/core/page_pool.h"

#include <catch2/catch.hpp>

namespace tokenline {

TEST_CASE("PagePool hands out each page once and reuses freed pages first", "[core][page_pool]") {
  PagePool pool(4);
  std::vector<PageId> pages;
  pool.allocate(3, pages);
  REQUIRE(pages == std::vector<PageId>{0, 1, 2});
  REQUIRE(pool.free_pages() == 1);
  REQUIRE_FALSE(pool.is_free(1));
  pool.release(1);
  REQUIRE(pool.is_free(1));
  std::vector<PageId> again;
  pool.allocate(2, again);
  // LIFO: the page freed last comes back first, then the untouched one.
  REQUIRE(again == std::vector<PageId>{1, 3});
  REQUIRE(pool.free_pages() == 0);
}

}  // namespace tokenline
