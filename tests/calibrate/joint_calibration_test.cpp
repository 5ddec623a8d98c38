// `tokenline calibrate --joint` run as a separate process: one fit of an engine term over two point files,
// each on its own GPU and profile (issue 43 item 5: an engine's CPU terms are fitted once and carried).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/calibrate/calibrate_process.h"
#include "tests/traces/test_dir.h"

using tokenline::testing::read_all;
using tokenline::testing::TestDir;
namespace fs = std::filesystem;

namespace {

using Run = tokenline::testing::CalibrateRun;

Run calibrate(const std::string& args, const TestDir& dir) {
  return tokenline::testing::run_calibrate(args, dir);
}

// One aggregated Llama-3.1-8B TP1 row measuring `ttft_ms` (made up: the test checks the mechanics).
void write_row(const std::string& path, const std::string& ttft_ms) {
  std::ofstream(path)
      << "concurrency,model_path,precision,mode,isl,osl,gemm_quant_mode,tp_size,attention_dp_size,moe_tp_"
         "size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
         "2,meta-llama/Llama-3.1-8B-Instruct,bf16,agg,256,64,bfloat16,1,,1,1,"
      << ttft_ms << ",3\n";
}

std::string models_dir(const TestDir& dir) {
  fs::create_directories(dir.file("models"));
  fs::copy_file(std::string(TOKENLINE_MODEL_TEST_DATA) + "/llama-3.1-8b.json",
                dir.file("models/meta-llama--Meta-Llama-3.1-8B_config.json"),
                fs::copy_options::overwrite_existing);
  return dir.file("models");
}

nlohmann::json calibration(const TestDir& dir, const std::string& out) {
  return nlohmann::json::parse(read_all(dir.file(out + "/calibration.json")));
}

}  // namespace

// File A (H200, h200-sglang) measures 100 ms to the first token, file B (H100, h100-sglang) 400 ms: fitted
// alone, first_token_latency_s goes to about 0.09 s on A and 0.39 s on B. Their joint fit must be the same
// whichever file comes first (the objective is over both), so a fit that optimized the first or the last
// file only would fail the order check; the leave-one-file-out fits show the files do pull apart.
TEST_CASE("calibrate --joint fits one value over every file, not the first or the last alone",
          "[calibration][joint]") {
  TestDir dir("calibrate-joint");
  write_row(dir.file("a.csv"), "100");
  write_row(dir.file("b.csv"), "400");
  const std::string a = "--joint '" + dir.file("a.csv") + ":h200:h200-sglang' ";
  const std::string b = "--joint '" + dir.file("b.csv") + ":h100:h100-sglang' ";
  const std::string common = "--models-dir '" + models_dir(dir) +
                             "' --min-requests 4 --jobs 2 --fit first_token_latency_s --fit-tolerance 0.05 "
                             "--sweeps 1 ";
  const Run ab = calibrate(a + b + common + "--out '" + dir.file("ab") + "'", dir);
  INFO(ab.out + ab.err);
  REQUIRE(ab.exit_code == 0);
  CHECK(ab.out.find("== file 1: " + dir.file("b.csv") + " on h100, profile h100-sglang") !=
        std::string::npos);
  CHECK(ab.out.find("carry to every sglang profile: --profile-set first_token_latency_s=") !=
        std::string::npos);
  CHECK(ab.out.find("leave-one-file-out") != std::string::npos);
  const nlohmann::json j = calibration(dir, "ab");
  REQUIRE(j["files"].size() == 2);
  const double joint = j["parameters"]["first_token_latency_s"]["value"].get<double>();
  const double without_a = j["files"][0]["left_out"]["values"]["first_token_latency_s"].get<double>();
  const double without_b = j["files"][1]["left_out"]["values"]["first_token_latency_s"].get<double>();
  CHECK(std::abs(without_a - without_b) > 0.1);  // B alone and A alone want values far apart
  // The objective is the mean over both files' groups (one each), not either file's.
  const double mean =
      (j["files"][0]["objective_after"].get<double>() + j["files"][1]["objective_after"].get<double>()) / 2;
  CHECK(std::abs(j["objective_after"].get<double>() - mean) < 1e-12);
  CHECK(j["objective_after"].get<double>() <= j["objective_before"].get<double>());
  // B first: the same fit.
  const Run ba = calibrate(b + a + common + "--no-lomo --out '" + dir.file("ba") + "'", dir);
  REQUIRE(ba.exit_code == 0);
  CHECK(calibration(dir, "ba")["parameters"]["first_token_latency_s"]["value"].get<double>() == joint);
  // The same inputs give the same output, byte for byte.
  const Run again = calibrate(a + b + common + "--out '" + dir.file("again") + "'", dir);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == ab.out);
  CHECK(read_all(dir.file("again/calibration.json")) == read_all(dir.file("ab/calibration.json")));
}

TEST_CASE("calibrate --joint: bad input is one message naming the option, exit 2", "[calibration][joint]") {
  TestDir dir("calibrate-joint-bad");
  write_row(dir.file("a.csv"), "100");
  const std::string models = "--models-dir '" + models_dir(dir) + "' --out '" + dir.file("out") + "' ";
  const std::string a = "--joint '" + dir.file("a.csv") + ":h200:h200-sglang' ";
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--joint '" + dir.file("a.csv") + ":h200' " + a,
       "tokenline: --joint: expected POINTS:HARDWARE:PROFILE (a points file, a hardware preset, a profile), "
       "found '" +
           dir.file("a.csv") + ":h200'\n"},
      {a, "tokenline: --joint: expected at least two POINTS:HARDWARE:PROFILE files, found 1\n"},
      {a + a + "--points '" + dir.file("a.csv") + "'",
       "tokenline: --joint: expected no --points (each --joint names its points, hardware and profile), "
       "found --points\n"},
      {a + a + "--fit kernel_launch_s",
       "tokenline: --fit kernel_launch_s: expected a profile timing term (a joint fit spans GPUs; a hardware "
       "field belongs to one), found a field of the hardware file\n"},
      {a + "--joint '" + dir.file("a.csv") + ":h200:h200-vllm'",
       "tokenline: --joint " + dir.file("a.csv") +
           ":h200:h200-vllm: expected a profile of the engine sglang (the first --joint's: one engine's "
           "terms), found vllm\n"},
      {"--points '" + dir.file("a.csv") + "' --only-mode disagg",
       "tokenline: --only-mode: expected --joint (a one-file calibration reads every row), found disagg\n"},
  };
  for (const Case& c : cases) {
    const Run r = calibrate(models + c.args, dir);
    INFO(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == c.message);
    CHECK(r.out.empty());  // nothing simulated
  }
}
