#include "serve/byte_tokenizer.h"

#include <catch2/catch.hpp>

using namespace tokenline;

TEST_CASE("byte tokenizer: bytes round-trip, specials are skipped on decode") {
  const ByteTokenizer tok;
  const std::string text = "h\xc3\xa9llo\n";
  const std::vector<int32_t> ids = tok.encode(text, true);
  REQUIRE(ids.size() == text.size() + 1);
  CHECK(ids.front() == ByteTokenizer::kBos);
  CHECK(ids[2] == 0xc3);
  CHECK(tok.decode(ids) == text);
}
