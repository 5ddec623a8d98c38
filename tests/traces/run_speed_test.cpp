// run_speed: a run's speed probe read back from its metrics.json (the directory or the file), absent in a
// simulation's, and the probe beside a trace for calibrate --trace.
#include "traces/run_speed.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "common/input_error.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;

TEST_CASE("a run's speed probe comes back from its metrics.json, a simulation's has none", "[run_speed]") {
  testing::TestDir dir("run_speed");
  std::filesystem::create_directories(dir.path() / "run");
  std::filesystem::create_directories(dir.path() / "sim");
  std::ofstream(dir.file("run/metrics.json")) << R"({"run": {"mode": "real", "speed_probe_s": 0.031}})";
  std::ofstream(dir.file("sim/metrics.json")) << R"({"run": {"mode": "sim"}})";
  CHECK(run_speed_probe_s(dir.file("run")) == Approx(0.031));
  CHECK(run_speed_probe_s(dir.file("run/metrics.json")) == Approx(0.031));
  CHECK(trace_run_speed_probe_s(dir.file("run/trace.json")) == Approx(0.031));
  CHECK_FALSE(trace_run_speed_probe_s(dir.file("sim/trace.json")));
  CHECK_FALSE(trace_run_speed_probe_s(dir.file("nowhere/trace.json")));
  CHECK_THROWS_WITH(run_speed_probe_s(dir.file("sim")),
                    Catch::Contains("sim/metrics.json: run.speed_probe_s") && Catch::Contains("found none"));
  CHECK_THROWS_WITH(run_speed_probe_s(dir.file("missing")), Catch::Contains("cannot be read"));
  std::ofstream(dir.file("run/metrics.json")) << R"({"run": {"speed_probe_s": -1}})";
  CHECK_THROWS_WITH(run_speed_probe_s(dir.file("run")), Catch::Contains("a number > 0"));
  std::ofstream(dir.file("run/metrics.json")) << "{not json";
  CHECK_THROWS_WITH(run_speed_probe_s(dir.file("run")), Catch::Contains("valid JSON"));
}
