#include "common/host_memory.h"

#include <catch2/catch.hpp>

namespace tokenline {
namespace {

TEST_CASE("MemAvailable is read in KiB", "[host_memory]") {
  CHECK(
      parse_mem_available("MemTotal:       1000 kB\nMemFree:          10 kB\nMemAvailable:     2048 kB\n") ==
      int64_t{2048} * 1024);
  CHECK_FALSE(parse_mem_available("MemTotal: 1000 kB\n").has_value());
  CHECK_FALSE(parse_mem_available("MemAvailable: x kB\n").has_value());
}

TEST_CASE("this machine reports available memory", "[host_memory]") {
  const std::optional<int64_t> bytes = available_host_bytes();
  REQUIRE(bytes.has_value());
  CHECK(*bytes > 0);
}

}  // namespace
}  // namespace tokenline
