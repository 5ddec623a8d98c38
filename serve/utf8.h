// UTF-8 validity of text that enters the server (request bodies, --served-model-name): invalid text is
// refused where it enters, so every JSON value the server builds from it dumps without throwing.
#pragma once

#include <cstddef>
#include <string_view>

namespace tokenline {

// The byte offset of the first byte that does not start or continue a well-formed UTF-8 sequence
// (RFC 3629: no overlongs, no surrogates U+D800..U+DFFF, nothing above U+10FFFF); text.size() when the
// whole text is valid.
size_t utf8_invalid_offset(std::string_view text);

inline bool is_valid_utf8(std::string_view text) {
  return utf8_invalid_offset(text) == text.size();
}

}  // namespace tokenline
