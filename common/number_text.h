// number_text: the shortest decimal text that reads back to the same double ("0.25", "2", "1e-06"),
// independent of the C locale. For user-facing messages and text outputs. And the way back for option
// values: parse_finite_number.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace tokenline {

inline std::string number_text(double v) {
  char buf[32];  // the longest shortest-round-trip double is 24 characters
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

// The whole of `text` as one finite decimal number, independent of the C locale (std::from_chars: no
// leading blanks or '+', no hex); nullopt otherwise.
inline std::optional<double> parse_finite_number(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace tokenline
