// InputError: the one exception type for bad user input (files, config fields, command-line values).
// Thrown only at the edges (loaders, readers, the CLI) and caught by the CLI, which prints what() and
// exits with code 2. Never thrown across engine/ (the core returns status instead).
// Messages are one printable line: control bytes (a NUL, a newline) show as \xNN, and a `found` longer
// than kMaxFoundChars is cut with "...", so what() is the whole message and a hostile line cannot hide it.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tokenline {

// `text` with every byte below 0x20 and 0x7F written as \xNN (UTF-8 bytes above 0x7F are kept).
inline std::string printable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7F) {
      out += c;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02X", u);
    out += escaped;
  }
  return out;
}

class InputError : public std::runtime_error {
 public:
  static constexpr size_t kMaxFoundChars = 200;  // keeps a message about a 64 MiB line one screen line

  // where: "file:line", "file: field", "--option"; expected and found are short phrases.
  InputError(const std::string& where, const std::string& expected, const std::string& found)
      : std::runtime_error(printable_text(where + ": expected " + expected + ", found " + shortened(found))) {
  }
  explicit InputError(const std::string& message) : std::runtime_error(printable_text(message)) {}

 private:
  static std::string shortened(const std::string& found) {
    return found.size() <= kMaxFoundChars ? found : found.substr(0, kMaxFoundChars) + "...";
  }
};

}  // namespace tokenline
