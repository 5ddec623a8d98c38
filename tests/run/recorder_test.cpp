#include "run/recorder.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/traces/test_dir.h"

namespace tokenline {
namespace {

TEST_CASE("the recorder never publishes metrics.json beside a requests.csv that failed", "[recorder]") {
  testing::TestDir dir("recorder_csv_fails");
  // A non-empty directory named requests.csv: the CSV's rename onto it fails.
  std::filesystem::create_directories(dir.file("requests.csv"));
  std::ofstream(dir.file("requests.csv/keep")) << "x";
  Recorder recorder(OutputConfig{.dir = dir.path().string(), .trace_detail = TraceDetail::kStep}, Slo{}, 1);
  recorder.describe_instance(0, "tp1", 1, 16);
  std::string why;
  CHECK_FALSE(recorder.finish(RunInfo{}, &why));
  CHECK(why.find("requests.csv") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("metrics.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("trace.json")));  // nor the trace, after the CSV failed
  CHECK_FALSE(std::filesystem::exists(dir.file("metrics.json.partial")));
}

TEST_CASE("the recorder publishes all three outputs when every write succeeds", "[recorder]") {
  testing::TestDir dir("recorder_all");
  Recorder recorder(OutputConfig{.dir = dir.path().string(), .trace_detail = TraceDetail::kStep}, Slo{}, 1);
  recorder.describe_instance(0, "tp1", 1, 16);
  std::string why;
  REQUIRE(recorder.finish(RunInfo{}, &why));
  for (const char* name : {"metrics.json", "requests.csv", "trace.json"})
    CHECK(std::filesystem::exists(dir.file(name)));
}

}  // namespace
}  // namespace tokenline
