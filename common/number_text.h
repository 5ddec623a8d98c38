// number_text: the shortest decimal text that reads back to the same double ("0.25", "2", "1e-06"),
// independent of the C locale. For user-facing messages and text outputs.
#pragma once

#include <charconv>
#include <string>

namespace tokenline {

inline std::string number_text(double v) {
  char buf[32];  // the longest shortest-round-trip double is 24 characters
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

}  // namespace tokenline
