#include "traces/output_file.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "common/input_error.h"
#include "tests/traces/test_dir.h"

namespace tokenline {
namespace {

TEST_CASE("an output file appears only after commit", "[output_file]") {
  testing::TestDir dir("output_file");
  const std::string path = dir.file("a.txt");
  {
    OutputFile f(path);
    f.buffer() = "hello";
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK(f.commit());
  }
  CHECK(testing::read_all(path) == "hello");
}

TEST_CASE("an uncommitted output file leaves nothing behind", "[output_file]") {
  testing::TestDir dir("output_file_abort");
  {
    OutputFile f(dir.file("b.txt"));
    f.buffer() = "half";
  }
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("an unwritable directory is an input error", "[output_file]") {
  testing::TestDir dir("output_file_bad");
  const std::string blocker = dir.file("file");
  {
    OutputFile f(blocker);
    CHECK(f.commit());
  }
  CHECK_THROWS_AS(require_writable_directory(blocker + "/sub"), InputError);
  CHECK_NOTHROW(require_writable_directory(dir.file("fresh/sub")));
}

}  // namespace
}  // namespace tokenline
