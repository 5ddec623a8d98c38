// `tokenline profile` and `tokenline calibrate --trace` as processes: a small grid writes a profile that
// `sim --profile` loads for its own model and layout and refuses for another layout (exit 2, naming both);
// a broken ops row and a bad --grid are exit 2 naming where; a run's trace fits the per-step overhead into
// the profile.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/tokenline_process.h"

using namespace tokenline;
using testing::read_all;
using testing::run_tokenline;
using testing::TestDir;

namespace {

const std::string kGrid =
    "--grid 'decode-batch=1,2;decode-keys=16,64;prefill-batch=1;prefill-tokens=16,64;warmup=1;repeats=1'";
const std::string kWorkload = "--workload 'synthetic:n=4,rate=50,input=fixed:48,output=fixed:6,seed=3'";
const std::string kEngine = " --model glm-5.3-tiny --kv-pages 16 --page-size 16";

std::string profile(const TestDir& d, const std::string& parallel) {
  const std::string dir = d.file("profile-" + parallel);
  const auto r = run_tokenline("profile --model glm-5.3-tiny --parallel " + parallel + " " + kGrid +
                                   " --page-size 16 --out '" + dir + "'",
                               d);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  return dir;
}

std::string sim_args(const std::string& dir, const std::string& parallel, const std::string& out) {
  return "sim --profile '" + dir + "' --hardware '" + dir + "/hardware.json' --parallel " + parallel +
         kEngine + " " + kWorkload + " --out '" + out + "'";
}

}  // namespace

TEST_CASE("a profile prices sim for its layout and refuses another with both named", "[profile_cli]") {
  const TestDir d("profile-cli-layout");
  const std::string dir = profile(d, "tp1");
  const nlohmann::json p = testing::read_json(dir + "/profile.json");
  CHECK(p["measured_on"]["parallel"] == "tp1");
  CHECK(p["metadata"]["backend"] == "cpu");
  CHECK(p["metadata"].contains("date"));
  CHECK(read_all(dir + "/ops.csv").rfind("op,phase,batch,tokens,latency_ms\nembed,decode,1,16,", 0) == 0);

  const auto ok = run_tokenline(sim_args(dir, "tp1", d.file("sim")), d);
  INFO(ok.stderr_text);
  CHECK(ok.exit_code == 0);
  const auto other = run_tokenline(sim_args(dir, "tp2", d.file("sim2")), d);
  CHECK(other.exit_code == 2);
  CHECK(other.stderr_text.find("layout tp1") != std::string::npos);
  CHECK(other.stderr_text.find("layout tp2") != std::string::npos);
}

TEST_CASE("bad profile input is exit 2 naming the file and line or the option", "[profile_cli]") {
  const TestDir d("profile-cli-errors");
  const auto grid = run_tokenline("profile --grid 'decode-keys=0' --out '" + d.file("p") + "'", d);
  CHECK(grid.exit_code == 2);
  CHECK(grid.stderr_text.find("--grid decode-keys") != std::string::npos);

  const std::string dir = profile(d, "tp1");
  std::ofstream(dir + "/ops.csv", std::ios::app) << "a_proj,decode,1,sixteen,0.5\n";
  const std::string text = read_all(dir + "/ops.csv");
  const std::string lines =
      std::to_string(std::count(text.begin(), text.end(), '\n'));  // the row appended last
  const auto bad = run_tokenline(sim_args(dir, "tp1", d.file("sim")), d);
  CHECK(bad.exit_code == 2);
  CHECK(bad.stderr_text.find("ops.csv:" + lines) != std::string::npos);
}

TEST_CASE("calibrate --trace fits the per-step overhead of a run into the profile", "[profile_cli]") {
  const TestDir d("profile-cli-calibrate");
  const std::string dir = profile(d, "tp1");
  const auto run = run_tokenline("run" + kEngine + " " + kWorkload + " --out '" + d.file("run") + "'", d);
  REQUIRE(run.exit_code == 0);
  const auto fit =
      run_tokenline("calibrate --trace '" + d.file("run") + "/trace.json' --profile '" + dir + "'", d);
  INFO(fit.stderr_text);
  REQUIRE(fit.exit_code == 0);
  const nlohmann::json p = testing::read_json(dir + "/profile.json");
  const nlohmann::json& t = p["timing"]["step_cpu_overhead_s"];
  CHECK(t["value"].get<double>() >= 0);
  CHECK(t["source"].get<std::string>().find("calibrate --trace trace.json") != std::string::npos);
  const auto no_profile = run_tokenline("calibrate --trace '" + d.file("run") + "/trace.json'", d);
  CHECK(no_profile.exit_code == 2);
}

TEST_CASE("profile and run record the engine's speed probe, and sim --speed-of prices at a run's",
          "[profile_cli]") {
  const TestDir d("profile-cli-speed");
  const std::string dir = profile(d, "tp1");
  CHECK(testing::read_json(dir + "/profile.json")["timing"]["speed_probe_s"]["value"].get<double>() > 0);
  const auto run = run_tokenline("run" + kEngine + " " + kWorkload + " --out '" + d.file("run") + "'", d);
  REQUIRE(run.exit_code == 0);
  const double run_probe_s = testing::read_json(d.file("run") + "/metrics.json")["run"]["speed_probe_s"];
  CHECK(run_probe_s > 0);
  REQUIRE(run_tokenline("calibrate --trace '" + d.file("run") + "/trace.json' --profile '" + dir + "'", d)
              .exit_code == 0);
  const nlohmann::json p = testing::read_json(dir + "/profile.json");
  CHECK(p["timing"]["speed_probe_s"]["value"].get<double>() ==
        Approx(run_probe_s));  // what the fit describes
  const auto at_speed =
      run_tokenline(sim_args(dir, "tp1", d.file("sim")) + " --speed-of '" + d.file("run") + "'", d);
  INFO(at_speed.stderr_text);
  CHECK(at_speed.exit_code == 0);
  CHECK(at_speed.stderr_text.find("priced at 1x its measured times") != std::string::npos);  // the same run
  const auto of_sim =
      run_tokenline(sim_args(dir, "tp1", d.file("sim2")) + " --speed-of '" + d.file("sim") + "'", d);
  CHECK(of_sim.exit_code == 2);
  CHECK(of_sim.stderr_text.find("run.speed_probe_s") != std::string::npos);
  const auto unprobed = run_tokenline(
      "run" + kEngine + " " + kWorkload + " --no-speed-probe --out '" + d.file("run2") + "'", d);
  REQUIRE(unprobed.exit_code == 0);
  CHECK_FALSE(testing::read_json(d.file("run2") + "/metrics.json")["run"].contains("speed_probe_s"));
}
