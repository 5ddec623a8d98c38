#include "traces/number_format.h"

#include <catch2/catch.hpp>
#include <clocale>
#include <cmath>

namespace tokenline {
namespace {

std::string fixed(double v, int decimals) {
  std::string s;
  append_fixed(s, v, decimals);
  return s;
}

TEST_CASE("append_fixed rounds to the requested decimals", "[number_format]") {
  CHECK(fixed(1.5, 3) == "1.500");
  CHECK(fixed(0.0005, 3) == "0.001");  // half away from zero
  CHECK(fixed(-0.0005, 3) == "-0.001");
  CHECK(fixed(-2.25, 1) == "-2.3");
  CHECK(fixed(123456.7891, 0) == "123457");
  CHECK(fixed(27.0e-3 * 1e6, 3) == "27000.000");
  CHECK(fixed(std::nan(""), 2) == "0.00");
}

TEST_CASE("append_fixed ignores the C locale", "[number_format]") {
  const char* previous = std::setlocale(LC_NUMERIC, nullptr);
  const std::string saved = previous != nullptr ? previous : "C";
  std::setlocale(LC_NUMERIC, "de_DE.UTF-8");  // may be absent; the point is that nothing depends on it
  CHECK(fixed(3.25, 2) == "3.25");
  std::setlocale(LC_NUMERIC, saved.c_str());
}

TEST_CASE("append_int handles the extremes", "[number_format]") {
  std::string s;
  append_int(s, INT64_MIN);
  CHECK(s == "-9223372036854775808");
  s.clear();
  append_int(s, 0);
  CHECK(s == "0");
}

TEST_CASE("append_json_string escapes quotes and controls", "[number_format]") {
  std::string s;
  append_json_string(s, "a\"b\\c\n");
  CHECK(s == "\"a\\\"b\\\\c\\u000a\"");
}

TEST_CASE("append_json_string escapes exactly the quote, the backslash and the control bytes",
          "[number_format]") {
  for (int c = 0; c < 256; ++c) {
    const char byte = static_cast<char>(c);
    std::string s;
    append_json_string(s, std::string_view(&byte, 1));
    const bool escaped = c < 0x20 || c == '"' || c == '\\';
    INFO("byte " << c);
    CHECK(s.size() == (c < 0x20 ? 8u : escaped ? 4u : 3u));  // "\u00XX", "\X" or the byte, quoted
    if (!escaped) CHECK(s[1] == byte);
  }
}

}  // namespace
}  // namespace tokenline
