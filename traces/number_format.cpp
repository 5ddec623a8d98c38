#include "traces/number_format.h"

#include <array>
#include <cmath>
#include <cstdint>

namespace tokenline {
namespace {

constexpr int kMaxDecimals = 9;  // 10^9 * the largest simulated time in us (1e9) still fits in int64
constexpr int64_t kPowersOfTen[kMaxDecimals + 1] = {1,      10,      100,      1000,      10000,
                                                    100000, 1000000, 10000000, 100000000, 1000000000};

// "00".."99": two digits per division halves the divisions of the hot integer path.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Writes value's decimal digits so that they end at `end`; returns where they begin (at most 20 bytes back).
char* write_unsigned(char* end, uint64_t value) {
  char* p = end;
  while (value >= 100) {
    const auto pair = static_cast<size_t>(value % 100) * 2;
    value /= 100;
    *--p = kDigitPairs[pair + 1];
    *--p = kDigitPairs[pair];
  }
  if (value >= 10) {
    const auto pair = static_cast<size_t>(value) * 2;
    *--p = kDigitPairs[pair + 1];
    *--p = kDigitPairs[pair];
  } else {
    *--p = static_cast<char>('0' + value);
  }
  return p;
}

void append_unsigned(std::string& out, uint64_t value) {
  char digits[20];
  const char* begin = write_unsigned(digits + sizeof digits, value);
  out.append(begin, static_cast<size_t>(digits + sizeof digits - begin));
}

// 1 for each byte a JSON string must escape: '"', '\\' and the control characters. A table, so the scan
// of a name (most have none) is a load and an OR per byte.
constexpr std::array<uint8_t, 256> kMustEscape = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[size_t(c)] = 1;
  t[size_t('"')] = t[size_t('\\')] = 1;
  return t;
}();

}  // namespace

void append_int(std::string& out, int64_t value) {
  if (value < 0) {
    out.push_back('-');
    append_unsigned(out, static_cast<uint64_t>(-(value + 1)) + 1);
    return;
  }
  append_unsigned(out, static_cast<uint64_t>(value));
}

void append_fixed(std::string& out, double value, int decimals) {
  if (decimals < 0) decimals = 0;
  if (decimals > kMaxDecimals) decimals = kMaxDecimals;
  if (!std::isfinite(value)) value = 0;
  const int64_t scale = kPowersOfTen[decimals];
  const long long scaled = std::llround(value * static_cast<double>(scale));
  const uint64_t magnitude =
      scaled < 0 ? static_cast<uint64_t>(-(scaled + 1)) + 1 : static_cast<uint64_t>(scaled);
  // Built backwards in one buffer and appended once: a trace writes two of these per event.
  char text[1 + 20 + 1 + kMaxDecimals];
  char* const end = text + sizeof text;
  char* p = end;
  if (decimals > 0) {
    uint64_t fraction = magnitude % static_cast<uint64_t>(scale);
    for (int i = 0; i < decimals; ++i) {
      *--p = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    *--p = '.';
  }
  p = write_unsigned(p, magnitude / static_cast<uint64_t>(scale));
  if (scaled < 0) *--p = '-';
  out.append(p, static_cast<size_t>(end - p));
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  uint8_t escapes = 0;
  for (const char ch : text) escapes |= kMustEscape[static_cast<unsigned char>(ch)];
  if (escapes == 0) {  // the common case: op and span names
    out.append(text);
    out.push_back('"');
    return;
  }
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

}  // namespace tokenline
