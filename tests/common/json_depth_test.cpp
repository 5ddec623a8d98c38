#include "common/json_depth.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/input_error.h"

namespace tokenline {
namespace {

TEST_CASE("json depth counts brackets outside strings", "[json_depth]") {
  CHECK(json_nesting_depth("1", 64) == 0);
  CHECK(json_nesting_depth("{\"a\": [1, {\"b\": []}]}", 64) == 4);
  CHECK(json_nesting_depth("{\"a\": \"[[[[\\\"[[\"}", 64) == 1);  // brackets and an escaped quote in a string
  CHECK(json_nesting_depth("]]]][[", 64) == 2);                   // malformed: the parser's to report
}

TEST_CASE("depth counting stops above the limit", "[json_depth][input_limits]") {
  const std::string deep(1'000'000, '[');
  CHECK(json_nesting_depth(deep, 64) == 65);
  CHECK_THROWS_WITH(require_json_depth(deep, "cluster.json"),
                    "cluster.json: expected JSON nested at most 64 levels deep, found deeper nesting");
  CHECK_NOTHROW(require_json_depth(std::string(64, '[') + std::string(64, ']'), "ok.json"));
}

}  // namespace
}  // namespace tokenline
