#include "workloads/line_reader.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "common/input_error.h"
#include "test_sources.h"

namespace tokenline {
namespace {

TEST_CASE("line reader: LF, CRLF and a last line without a newline", "[line_reader]") {
  LineReader lines = test::text_lines("a\r\n\nbb\nccc");
  std::string line;
  std::vector<std::string> got;
  while (lines.next(line)) got.push_back(line);
  CHECK(got == std::vector<std::string>{"a", "", "bb", "ccc"});
  CHECK(lines.line_number() == 4);
}

TEST_CASE("line reader: lines across many read chunks come back whole", "[line_reader]") {
  const std::string long_line(200'000, 'x');  // three 64 KiB chunks and a remainder
  LineReader lines = test::text_lines(long_line + "\nshort\n" + long_line);
  std::string line;
  REQUIRE(lines.next(line));
  CHECK(line == long_line);
  CHECK_FALSE(lines.too_long());
  REQUIRE(lines.next(line));
  CHECK(line == "short");
  REQUIRE(lines.next(line));
  CHECK(line.size() == long_line.size());
  CHECK_FALSE(lines.next(line));
}

TEST_CASE("a line beyond the limit is flagged, not held, and the next line is read",
          "[line_reader][input_limits]") {
  LineReader lines(std::make_unique<std::istringstream>(std::string(1000, 'y') + "\nnext\n"), "t", 100);
  std::string line;
  REQUIRE(lines.next(line));
  CHECK(lines.too_long());
  CHECK(line.size() == 100);
  REQUIRE(lines.next(line));
  CHECK_FALSE(lines.too_long());
  CHECK(line == "next");
  CHECK(lines.line_number() == 2);
}

TEST_CASE("a directory is named a directory, not an empty file", "[line_reader][input_limits]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  try {
    LineReader::open_file(dir);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == dir + ": expected a workload file, found a directory");
  }
}

}  // namespace
}  // namespace tokenline
