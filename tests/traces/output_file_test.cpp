#include "traces/output_file.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

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

TEST_CASE("issue 16: a starting run retires the outputs of the run before", "[output_file][issue16]") {
  testing::TestDir dir("output_file_retire");
  for (const char* name : {"metrics.json", "trace.json"}) {
    OutputFile f(dir.file(name));
    f.buffer() = std::string("old ") + name;
    REQUIRE(f.commit());
  }
  std::ofstream(dir.file("requests.csv.partial")) << "left by a crash";
  retire_previous_outputs(dir.path().string());
  CHECK_FALSE(std::filesystem::exists(dir.file("metrics.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("trace.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("requests.csv.partial")));
  CHECK(testing::read_all(dir.file("metrics.json.previous")) == "old metrics.json");
  CHECK(testing::read_all(dir.file("trace.json.previous")) == "old trace.json");
  remove_previous_outputs(dir.path().string());
  CHECK(std::filesystem::is_empty(dir.path()));
  CHECK_NOTHROW(retire_previous_outputs(dir.file("absent")));
}

}  // namespace
}  // namespace tokenline
