#include "serve/utf8.h"

#include <cstdint>

namespace tokenline {

size_t utf8_invalid_offset(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t b = byte(i);
    if (b < 0x80) {
      ++i;
      continue;
    }
    // RFC 3629's table 4: the lead byte fixes the length and the range of the second byte.
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b == 0xE0) {
      len = 3, lo = 0xA0;
    } else if (b == 0xED) {
      len = 3, hi = 0x9F;  // U+D800..U+DFFF are surrogates, not characters
    } else if (b >= 0xE1 && b <= 0xEF) {
      len = 3;
    } else if (b == 0xF0) {
      len = 4, lo = 0x90;
    } else if (b >= 0xF1 && b <= 0xF3) {
      len = 4;
    } else if (b == 0xF4) {
      len = 4, hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;  // a continuation byte without a lead, an overlong lead (C0, C1) or F5..FF
    }
    if (i + len > text.size()) return i;
    if (byte(i + 1) < lo || byte(i + 1) > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    i += len;
  }
  return text.size();
}

}  // namespace tokenline
