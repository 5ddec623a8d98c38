// fit_trace: a synthetic run whose steps took 2 x the profile's priced ops + 0.5 ms gives back
// op_time_scale 2 and step_cpu_overhead_s 0.5 ms - which needs each decode's context rebuilt from the
// prompt before it - and the fit written into profile.json is what the profile loads next.
#include "calibrate/trace_fit.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/input_error.h"
#include "engine/model/op_profile.h"
#include "engine/model/op_profile_writer.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

constexpr double kScale = 2, kOverheadMs = 0.5;

// Decode: a_proj costs `batch` ms, sparse_mla `keys` / 64 ms (exact at 64, 128, 256 keys). Prefill:
// a_proj costs tokens / 16 ms (exact at 64, 127, 128 tokens). Every other op has no rows (costs 0).
fs::path profile_dir() {
  const fs::path dir = fs::temp_directory_path() / "tl_trace_fit_profile";
  fs::remove_all(dir);
  std::vector<OwnOpRow> rows;
  for (int64_t b : {1, 2, 4}) {
    for (int64_t k : {64, 128, 256}) {
      rows.push_back({"a_proj", true, b, k, double(b)});
      rows.push_back({"sparse_mla", true, b, k, double(k) / 64});
    }
  }
  for (int64_t t : {64, 127, 128}) rows.push_back({"a_proj", false, 1, t, double(t) / 16});
  write_own_profile(dir.string(),
                    {.name = "t",
                     .hardware = "cpu-host",
                     .backend = "cpu",
                     .model = "glm-5.3-tiny",
                     .parallel = "tp1",
                     .machine = "test",
                     .threads = 1,
                     .date = "2026-12-01T00:00:00Z",
                     .warmup = 1,
                     .repeats = 1,
                     .step_overhead_s = 0},
                    {.gemm_flops = 1e10,
                     .memory_bw = 1e10,
                     .memory_bytes = 8e9,
                     .collective_bw = 1e9,
                     .collective_latency_s = 1e-5},
                    rows);
  return dir;
}

// A trace of steps, each lasting kScale x priced + kOverheadMs, back to back.
struct Step {
  std::string batch;
  int tokens;
  double priced_ms;
};

fs::path write_trace(const fs::path& dir, const std::vector<Step>& steps) {
  nlohmann::json events = nlohmann::json::array();
  double t_ms = 0;
  int64_t index = 0;
  for (const Step& st : steps) {
    const double dur_ms = kScale * st.priced_ms + kOverheadMs;
    events.push_back(
        {{"ph", "X"},
         {"pid", 1},
         {"tid", 0},
         {"ts", t_ms * 1e3},
         {"dur", dur_ms * 1e3},
         {"name", "step"},
         {"args", {{"step", index++}, {"tokens", st.tokens}, {"requests", 1}, {"batch", st.batch}}}});
    t_ms += dur_ms;
  }
  const fs::path trace = dir / "trace.json";
  std::ofstream(trace) << nlohmann::json{{"traceEvents", events}}.dump();
  return trace;
}

}  // namespace

TEST_CASE("a run made from known step terms gives them back", "[trace_fit]") {
  const fs::path dir = profile_dir();
  // A 127-token prompt (127 / 16 ms), then its first decode attends to 128 keys (1 + 2 ms): priced right
  // only when the decode's context comes from the prefill before it.
  const fs::path trace = write_trace(dir, {{"0p127@0", 127, 127.0 / 16},
                                           {"0d1", 1, 3},
                                           {"1p127@0", 127, 127.0 / 16},
                                           {"1d1", 1, 3},
                                           {"2p63@0", 63, 4},  // below the first row: its latency
                                           {"2d1", 1, 2}});
  const TraceFit f = fit_trace({.trace = trace.string(), .profile = dir.string(), .hardware = ""});
  CHECK(f.steps == 6);
  CHECK(f.gap_s == 0);
  CHECK(f.op_time_scale == Approx(kScale).epsilon(1e-3));
  CHECK(f.step_cpu_overhead_s == Approx(kOverheadMs * 1e-3).epsilon(1e-3));
  CHECK(f.with_fit.mape < 1e-3);
  CHECK(f.with_profile.mape > 0.4);  // the profile as written: scale 1, overhead 0
  write_trace_fit(dir.string(), f, trace.string());
  const auto p = load_op_profile(dir.string());
  CHECK(p->param(TimingParam::kOpTimeScale) == Approx(f.op_time_scale));
  CHECK(p->param(TimingParam::kStepCpuOverheadS) == Approx(f.step_cpu_overhead_s));
}

TEST_CASE("trace calibration needs a readable trace and an own profile", "[trace_fit]") {
  const fs::path dir = profile_dir();
  CHECK_THROWS_AS(fit_trace({.trace = (dir / "none.json").string(), .profile = dir.string(), .hardware = ""}),
                  InputError);
  CHECK_THROWS_AS(
      fit_trace({.trace = (dir / "none.json").string(), .profile = "h200-sglang", .hardware = ""}),
      InputError);
}

}  // namespace tokenline
