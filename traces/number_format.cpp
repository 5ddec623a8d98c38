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

// How many decimal digits value has (1 for 0).
int digit_count(uint64_t value) {
  int n = 1;
  for (; value >= 10000; value /= 10000) n += 4;
  return value >= 1000 ? n + 3 : value >= 100 ? n + 2 : value >= 10 ? n + 1 : n;
}

// |value| as unsigned, INT64_MIN included.
uint64_t magnitude_of(int64_t value) {
  return value < 0 ? static_cast<uint64_t>(-(value + 1)) + 1 : static_cast<uint64_t>(value);
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

char* put_int(char* out, int64_t value) {
  const uint64_t magnitude = magnitude_of(value);
  if (value < 0) *out++ = '-';
  char* end = out + digit_count(magnitude);
  write_unsigned(end, magnitude);
  return end;
}

char* put_fixed(char* out, double value, int decimals) {
  if (decimals < 0) decimals = 0;
  if (decimals > kMaxDecimals) decimals = kMaxDecimals;
  if (!std::isfinite(value)) value = 0;
  const int64_t scale = kPowersOfTen[decimals];
  const long long scaled = std::llround(value * static_cast<double>(scale));
  const uint64_t magnitude = magnitude_of(scaled);
  if (scaled < 0) *out++ = '-';
  const uint64_t whole = magnitude / static_cast<uint64_t>(scale);
  char* end = out + digit_count(whole);
  write_unsigned(end, whole);
  if (decimals == 0) return end;
  *end++ = '.';
  uint64_t fraction = magnitude % static_cast<uint64_t>(scale);
  for (int i = decimals - 1; i >= 0; --i) {
    end[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  return end + decimals;
}

void append_int(std::string& out, int64_t value) {
  char text[kMaxNumberChars];
  out.append(text, static_cast<size_t>(put_int(text, value) - text));
}

void append_fixed(std::string& out, double value, int decimals) {
  char text[kMaxNumberChars];  // a sign, 20 digits, a point and 9 decimals at most
  out.append(text, static_cast<size_t>(put_fixed(text, value, decimals) - text));
}

bool json_plain(std::string_view text) {
  uint8_t escapes = 0;
  for (const char ch : text) escapes |= kMustEscape[static_cast<unsigned char>(ch)];
  return escapes == 0;
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  if (json_plain(text)) {  // the common case: op and span names
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
