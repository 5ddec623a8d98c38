// LineReader: reads a text stream one line at a time, holding only the current line. Accepts LF and CRLF
// line ends and a last line without a newline. A line longer than limits::kMaxLineBytes is read up to the
// limit, the rest of it skipped, and flagged (too_long()), so a line without an end cannot fill memory.
// Owns its stream.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

namespace tokenline {

class LineReader {
 public:
  // `name` is what error messages call the input (a path, or "<embedded>/...").
  LineReader(std::unique_ptr<std::istream> in, std::string name, int64_t max_line_bytes = -1);
  // Opens a file; throws InputError if it cannot be opened or is a directory.
  static LineReader open_file(const std::string& path);

  // Reads the next line into `line` without its line end; false at the end of the stream.
  bool next(std::string& line);
  // True when the line last read was longer than the limit (`line` then holds its first bytes).
  bool too_long() const { return too_long_; }
  int64_t max_line_bytes() const { return max_line_bytes_; }
  int64_t line_number() const { return line_number_; }  // 1-based number of the line last read
  const std::string& name() const { return name_; }
  // "name:line" for error messages about the line last read.
  std::string where() const;

 private:
  std::unique_ptr<std::istream> in_;
  std::string name_;
  int64_t max_line_bytes_;
  int64_t line_number_ = 0;
  bool too_long_ = false;
};

}  // namespace tokenline
