// Numbers that enter the CLI (flags, profile files, traces, side files) are finite and in a stated range,
// and files are bounded before they are read: each case below was, before, a SIGABRT inside SimGrid, an
// "internal error", a read until memory ran out, or exit 0 with absurd figures. Now: exit 2 and one
// message naming the flag, file or key, what was found and what is allowed.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::run_tokenline;
using testing::TestDir;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kVllm =
    "sim --model llama-3.1-8b --parallel tp1 --profile h200-vllm --workload synthetic:n=2 ";

// A profile directory in `dir` whose profile.json is `json` (tables, when any, are the caller's).
std::string profile_dir(const TestDir& dir, const std::string& json) {
  std::filesystem::create_directories(dir.file("profile"));
  std::ofstream(dir.file("profile/profile.json")) << json;
  return dir.file("profile");
}

// A one-step trace: a step span of `step_us` and an op span of `op_us` (text, as written in the file).
std::string one_step_trace(const std::string& step_us, const std::string& op_us) {
  return R"({"traceEvents": [{"ph": "X", "name": "step", "pid": 1, "tid": 0, "ts": 0, "dur": )" + step_us +
         R"(, "args": {"step": 0, "tokens": 1, "requests": 1}}, {"ph": "X", "name": "embed", "pid": 1, "tid": 0,
         "ts": 1, "dur": )" +
         op_us + "}]}";
}

}  // namespace

TEST_CASE("profile timing terms out of range are exit 2 naming the key, not SimGrid's abort", "[cli]") {
  TestDir dir("cli_numbers_timing");
  const std::string out = " --out " + dir.file("o");
  for (const char* set :
       {"step_floor_per_layer_s=1e308", "step_cpu_overhead_s=1e20", "eager_launch_gap_s=1e308"}) {
    INFO(set);
    const auto r = run_tokenline(kVllm + "--profile-set " + set + out, dir);
    CHECK(r.exit_code == 2);
    const std::string key = std::string(set).substr(0, std::string(set).find('='));
    CHECK(contains(r.stderr_text, "--profile-set " + key + ": expected a value in [0, 60], found 1e+"));
  }
  const auto twice =
      run_tokenline(kVllm + "--profile-set step_cpu_overhead_s=0.001,step_cpu_overhead_s=0.002" + out, dir);
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.stderr_text, "--profile-set step_cpu_overhead_s: expected each name once"));
  const std::string json_profile =
      profile_dir(dir, R"({"name": "t", "hardware": "h200", "engine_name": "vllm",
               "timing": {"eager_launch_gap_s": {"value": 1e308, "source": "x"}}})");
  const auto in_json = run_tokenline(
      "sim --model llama-3.1-8b --parallel tp1 --workload synthetic:n=2 --profile " + json_profile + out,
      dir);
  CHECK(in_json.exit_code == 2);
  CHECK(contains(in_json.stderr_text,
                 "profile.json: timing.eager_launch_gap_s.value: expected a value in [0, 60], found 1e+308"));
  CHECK_FALSE(std::filesystem::exists(dir.file("o/metrics.json")));
}

TEST_CASE("a profile.json number beyond a double is exit 2 with a message, not an internal error", "[cli]") {
  TestDir dir("cli_numbers_1e999");
  const std::string p = profile_dir(dir, R"({"name": "t", "hardware": "h200", "engine_name": "vllm",
      "timing": {"step_cpu_overhead_s": {"value": 1e999, "source": "x"}}})");
  const auto r = run_tokenline("sim --model llama-3.1-8b --parallel tp1 --workload synthetic:n=2 --profile " +
                                   p + " --out " + dir.file("o"),
                               dir);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.stderr_text, "profile.json: expected valid JSON with finite numbers"));
  CHECK_FALSE(contains(r.stderr_text, "internal error"));
}

TEST_CASE("flags: --duration nan and --slo ttft=inf are refused naming the flag", "[cli]") {
  TestDir dir("cli_numbers_flags");
  const std::string sim = "sim --workload synthetic:n=2 --out " + dir.file("o") + " ";
  const auto duration = run_tokenline(sim + "--duration nan", dir);
  CHECK(duration.exit_code == 2);
  CHECK(contains(duration.stderr_text, "--duration: expected a finite number, found 'nan'"));
  const auto big = run_tokenline(sim + "--duration 1e999", dir);
  CHECK(big.exit_code == 2);
  CHECK(contains(big.stderr_text, "--duration: expected a finite number, found '1e999'"));
  const auto slo = run_tokenline(sim + "--slo ttft=inf", dir);
  CHECK(slo.exit_code == 2);
  CHECK(contains(slo.stderr_text, "--slo ttft: expected a positive, finite duration"));
  const auto ok = run_tokenline(sim + "--duration 100 --slo ttft=2s", dir);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("a profile table or an expert histogram at /dev/zero is refused at once, not read until OOM",
          "[cli]") {
  TestDir dir("cli_numbers_devzero");
  const std::string p = profile_dir(
      dir, R"({"name": "t", "hardware": "h200", "engine_name": "vllm", "tables": {"gemm": "/dev/zero"}})");
  const auto table =
      run_tokenline("sim --model llama-3.1-8b --parallel tp1 --workload synthetic:n=2 --profile " + p +
                        " --out " + dir.file("o"),
                    dir);
  CHECK(table.exit_code == 2);
  CHECK(contains(table.stderr_text, "/dev/zero: expected a file of at most 64 MiB (an input limit)"));
  const auto skew = run_tokenline(
      "sim --model deepseek-v3 --parallel dp8-ep8 --workload synthetic:n=2 --expert-skew histogram:/dev/zero "
      "--out " +
          dir.file("o"),
      dir);
  CHECK(skew.exit_code == 2);
  CHECK(contains(skew.stderr_text,
                 "--expert-skew histogram:/dev/zero: expected a file of at most 64 MiB (an input limit)"));
}

TEST_CASE("compare refuses negative and 1e308 span durations instead of measuring them", "[cli]") {
  TestDir dir("cli_numbers_compare");
  std::ofstream(dir.file("good.json")) << one_step_trace("5", "2");
  const auto compare = [&](const std::string& step_us, const std::string& op_us) {
    std::ofstream(dir.file("bad.json")) << one_step_trace(step_us, op_us);
    return run_tokenline("compare " + dir.file("good.json") + " " + dir.file("bad.json"), dir);
  };
  REQUIRE(compare("5", "2").exit_code == 0);
  const auto step = compare("-1600", "2");  // was "measured -1.6 ms"
  CHECK(step.exit_code == 2);
  CHECK(
      contains(step.stderr_text, "bad.json: traceEvents[0]: expected \"dur\" in [0, 2e+15] us, found -1600"));
  const auto op = compare("5", "-5");  // was "measured 0"
  CHECK(op.exit_code == 2);
  CHECK(contains(op.stderr_text, "bad.json: traceEvents[1]: expected \"dur\" in [0, 2e+15] us, found -5"));
  const auto huge = compare("5", "1e308");  // was "measured 0"
  CHECK(huge.exit_code == 2);
  CHECK(contains(huge.stderr_text, "traceEvents[1]: expected \"dur\" in [0, 2e+15] us, found 1e+308"));
}

TEST_CASE("a run whose virtual clock would pass the simulated horizon stops with a message, exit 2",
          "[cli]") {
  // Replayed steps of 1.5e9 s each (inside a trace's range of 2e15 us) reach the 2e9 s horizon at the
  // second step. Before: exit 0 after 3.8e11 simulated seconds.
  TestDir dir("cli_numbers_horizon");
  const std::string sim = "sim --model glm-5.3-tiny --parallel tp1 --workload synthetic:n=2 ";
  REQUIRE(run_tokenline(sim + "--trace-detail op --out " + dir.file("a"), dir).exit_code == 0);
  nlohmann::json trace = testing::read_json(dir.file("a/trace.json"));
  for (auto& e : trace["traceEvents"])
    if (e.value("ph", "") == "X" && e.value("name", "") == "step") e["dur"] = 1.5e15;
  std::ofstream(dir.file("long.json")) << trace.dump();
  const auto r =
      run_tokenline(sim + "--backend replay:" + dir.file("long.json") + " --out " + dir.file("b"), dir);
  CHECK(r.exit_code == 2);
  CHECK(contains(
      r.stderr_text,
      "tokenline: simulation stopped: instance-0: the simulated clock would pass its horizon of 2e+09 s "
      "(an input limit, README \"Hostile and careless input\"): a wait of 1.5e+09 s at 1.5e+09 s"));
}

}  // namespace tokenline
