#include "common/input_error.h"

#include <catch2/catch.hpp>
#include <string>

namespace tokenline {
namespace {

TEST_CASE("a NUL byte does not cut a message short", "[input_error][input_limits]") {
  const std::string found = std::string("'{\"a\": ") + '\0' + " 1}'";
  const InputError e("f.jsonl:1", "a JSON object", found);
  CHECK(std::string(e.what()) == "f.jsonl:1: expected a JSON object, found '{\"a\": \\x00 1}'");
}

TEST_CASE("messages are one printable line, UTF-8 stays", "[input_error]") {
  CHECK(printable_text("a\nb\tc\x7f") == "a\\x0Ab\\x09c\\x7F");
  CHECK(printable_text("caf\xC3\xA9") == "caf\xC3\xA9");
  const InputError e(std::string("x\ry"));
  CHECK(std::string(e.what()) == "x\\x0Dy");
}

TEST_CASE("a long found is shortened", "[input_error]") {
  const InputError e("w", "e", std::string(10'000, 'z'));
  CHECK(std::string(e.what()) ==
        "w: expected e, found " + std::string(InputError::kMaxFoundChars, 'z') + "...");
}

}  // namespace
}  // namespace tokenline
