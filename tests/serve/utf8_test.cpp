#include "serve/utf8.h"

#include <catch2/catch.hpp>
#include <string>

namespace tokenline {

TEST_CASE("UTF-8 validity follows RFC 3629: no overlongs, surrogates or code points past U+10FFFF",
          "[serve]") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é, €, an emoji
  CHECK(is_valid_utf8("\xf4\x8f\xbf\xbf"));                           // U+10FFFF, the last code point
  CHECK(utf8_invalid_offset("caf\xe9") == 3);                         // Latin-1 é
  CHECK(utf8_invalid_offset("ab\xc0\xaf") == 2);                      // overlong '/'
  CHECK(utf8_invalid_offset("\xed\xa0\x80") == 0);                    // U+D800, a surrogate
  CHECK(utf8_invalid_offset("x\xf4\x90\x80\x80") == 1);               // past U+10FFFF
  CHECK(utf8_invalid_offset("\x80") == 0);                            // a continuation alone
  CHECK(utf8_invalid_offset("ok\xe2\x82") == 2);                      // cut short
  CHECK(utf8_invalid_offset(std::string("a\0b", 3)) == 3);            // NUL is a character
}

}  // namespace tokenline
