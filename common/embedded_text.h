// EmbeddedText: a text file compiled into the binary (see common/embed_text_files.cmake), looked up by its
// path relative to the layer folder ("hardware/h200.json"). Read-only views into static storage.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tokenline {

struct EmbeddedText {
  std::string_view path;  // relative to the layer folder, '/' separated
  std::string_view text;  // the file's bytes (LF line ends)
};

// The file stored under `path`, or nullopt.
inline std::optional<std::string_view> find_embedded(const std::vector<EmbeddedText>& files,
                                                     std::string_view path) {
  for (const EmbeddedText& f : files) {
    if (f.path == path) return f.text;
  }
  return std::nullopt;
}

}  // namespace tokenline
