#include "traces/number_format.h"

#include <cmath>

namespace tokenline {
namespace {

constexpr int kMaxDecimals = 9;  // 10^9 * the largest simulated time in us (1e9) still fits in int64
constexpr int64_t kPowersOfTen[kMaxDecimals + 1] = {1,      10,      100,      1000,      10000,
                                                    100000, 1000000, 10000000, 100000000, 1000000000};

void append_unsigned(std::string& out, uint64_t value) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0) out.push_back(digits[--n]);
}

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
  uint64_t magnitude = scaled < 0 ? static_cast<uint64_t>(-(scaled + 1)) + 1 : static_cast<uint64_t>(scaled);
  if (scaled < 0) out.push_back('-');
  append_unsigned(out, magnitude / static_cast<uint64_t>(scale));
  if (decimals == 0) return;
  out.push_back('.');
  uint64_t fraction = magnitude % static_cast<uint64_t>(scale);
  char digits[kMaxDecimals];
  for (int i = decimals - 1; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  out.append(digits, static_cast<size_t>(decimals));
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
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
