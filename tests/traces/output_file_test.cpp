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

TEST_CASE("a starting run retires the outputs of the run before", "[output_file][input_limits]") {
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

void write_file(const std::string& path, const std::string& text) {
  OutputFile f(path);
  f.buffer() = text;
  REQUIRE(f.commit());
}

TEST_CASE("a failed run puts the earlier outputs back and removes its own", "[output_file]") {
  testing::TestDir dir("output_file_restore");
  write_file(dir.file("metrics.json"), "old metrics");
  write_file(dir.file("requests.csv"), "old rows");
  {
    RunOutputs outputs(dir.path().string());
    CHECK_FALSE(std::filesystem::exists(dir.file("metrics.json")));
    write_file(dir.file("requests.csv"), "new rows");  // published, then the run fails
    write_file(dir.file("trace.json"), "new trace");
    std::ofstream(dir.file("metrics.json.partial")) << "half";
  }
  CHECK(testing::read_all(dir.file("metrics.json")) == "old metrics");
  CHECK(testing::read_all(dir.file("requests.csv")) == "old rows");
  CHECK_FALSE(std::filesystem::exists(dir.file("trace.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("metrics.json.partial")));
  CHECK_FALSE(std::filesystem::exists(dir.file("metrics.json.previous")));
}

TEST_CASE("a committed run removes the earlier outputs", "[output_file]") {
  testing::TestDir dir("output_file_commit");
  write_file(dir.file("metrics.json"), "old metrics");
  write_file(dir.file("trace.json.gz"), "old gzip trace");
  {
    RunOutputs outputs(dir.path().string());
    write_file(dir.file("metrics.json"), "new metrics");
    outputs.commit();
  }
  CHECK(testing::read_all(dir.file("metrics.json")) == "new metrics");
  CHECK_FALSE(std::filesystem::exists(dir.file("trace.json.gz")));
  CHECK_FALSE(std::filesystem::exists(dir.file("metrics.json.previous")));
}

TEST_CASE("a second run into a directory another run holds is refused and touches nothing", "[output_file]") {
  testing::TestDir dir("output_file_lock");
  write_file(dir.file("metrics.json"), "old metrics");
  RunOutputs first(dir.path().string());
  write_file(dir.file("requests.csv.partial"), "the first run's rows so far");
  CHECK_THROWS_WITH(RunOutputs(dir.path().string()), Catch::Contains("another run holds its lock"));
  CHECK(testing::read_all(dir.file("metrics.json.previous")) == "old metrics");
  CHECK(std::filesystem::exists(dir.file("requests.csv.partial")));  // the first run's partial file stays
}

}  // namespace
}  // namespace tokenline
