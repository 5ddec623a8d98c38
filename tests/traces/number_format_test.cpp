#include "traces/number_format.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <string>

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

// The text append_fixed must give, by another road: std::to_string of the rounded integer and fraction.
std::string reference_fixed(double v, int decimals) {
  decimals = std::clamp(decimals, 0, 9);
  if (!std::isfinite(v)) v = 0;
  const long long scale = static_cast<long long>(std::pow(10, decimals));
  const long long scaled = std::llround(v * static_cast<double>(scale));
  const unsigned long long magnitude =
      scaled < 0 ? 0ULL - static_cast<unsigned long long>(scaled) : static_cast<unsigned long long>(scaled);
  std::string text =
      (scaled < 0 ? "-" : "") + std::to_string(magnitude / static_cast<unsigned long long>(scale));
  if (decimals == 0) return text;
  const std::string fraction = std::to_string(magnitude % static_cast<unsigned long long>(scale));
  return text + "." + std::string(size_t(decimals) - fraction.size(), '0') + fraction;
}

TEST_CASE("put_fixed / put_int write the digits std::to_string writes", "[number_format]") {
  const double values[] = {
      0,      0.0004, 0.0005,       -0.0005,       1.5,          -2.25,       9.9995,
      10,     99.999, 1e6,          -1e6,          1e9,          123456.7891, 27e-3 * 1e6,
      -9.5e8, 1e-12,  9999.9999999, 12345678.0625, std::nan(""), INFINITY,    -INFINITY};
  for (const double v : values) {
    for (int decimals = -1; decimals <= 10; ++decimals) {
      char text[kMaxNumberChars];
      CHECK(std::string(text, put_fixed(text, v, decimals)) == reference_fixed(v, decimals));
      CHECK(fixed(v, decimals) == reference_fixed(v, decimals));
    }
  }
  for (const int64_t v :
       {int64_t{0}, int64_t{7}, int64_t{10}, int64_t{99}, int64_t{100}, int64_t{12345}, int64_t{99999},
        int64_t{100000}, int64_t{-1}, int64_t{-10000}, INT64_MAX, INT64_MIN}) {
    char text[kMaxNumberChars];
    CHECK(std::string(text, put_int(text, v)) == std::to_string(v));
    std::string appended;
    append_int(appended, v);
    CHECK(appended == std::to_string(v));
  }
}

}  // namespace
}  // namespace tokenline
