// fit_trace: a synthetic run whose a_proj spans took 2 x the profile's priced a_proj, its sparse_mla spans
// 3 x, and whose steps took 0.5 ms beyond their ops gives back op scales 2 and 3 and step_cpu_overhead_s
// 0.5 ms - which needs each decode's context rebuilt from the prompt before it - and the fit written into
// profile.json is what the profile loads and prices with next.
#include "calibrate/trace_fit.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/op_profile_own.h"
#include "cost/op_profile_writer.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

constexpr double kAProjScale = 2, kSparseMlaScale = 3, kOverheadMs = 0.5;

// Decode: a_proj costs `batch` ms, sparse_mla `keys` / 64 ms (exact at 64, 128, 256 keys). Prefill:
// a_proj costs tokens / 16 ms (exact at 64, 127, 128 tokens). Every other op has no rows (costs 0).
// One folder per process: ctest runs this file's test cases as processes at once.
fs::path profile_dir() {
  const fs::path dir = fs::temp_directory_path() / ("tl_trace_fit_profile-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  struct RemovedAtExit {
    fs::path path;
    ~RemovedAtExit() { fs::remove_all(path); }
  };
  static const RemovedAtExit removed{dir};
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

// A trace of steps, back to back: each step's a_proj and sparse_mla spans (rank 0's compute stream, tid
// 0) last their scale x the priced time, and the step kOverheadMs more than its ops.
struct Step {
  std::string batch;
  int tokens;
  double a_proj_ms, sparse_mla_ms;  // priced
};

nlohmann::json span(const std::string& name, double start_ms, double dur_ms) {
  return {{"ph", "X"}, {"pid", 1}, {"tid", 0}, {"ts", start_ms * 1e3}, {"dur", dur_ms * 1e3}, {"name", name}};
}

fs::path write_trace(const fs::path& dir, const std::vector<Step>& steps, bool with_ops = true) {
  nlohmann::json events = nlohmann::json::array();
  double t_ms = 0;
  int64_t index = 0;
  for (const Step& st : steps) {
    const double a_ms = kAProjScale * st.a_proj_ms, s_ms = kSparseMlaScale * st.sparse_mla_ms;
    const double dur_ms = a_ms + s_ms + kOverheadMs;
    nlohmann::json step = span("step", t_ms, dur_ms);
    step["args"] = {{"step", index++}, {"tokens", st.tokens}, {"requests", 1}, {"batch", st.batch}};
    events.push_back(step);
    if (with_ops) {
      events.push_back(span("a_proj", t_ms, a_ms));
      if (s_ms > 0) events.push_back(span("sparse_mla", t_ms + a_ms, s_ms));
    }
    t_ms += dur_ms;
  }
  const fs::path trace = dir / "trace.json";
  std::ofstream(trace) << nlohmann::json{{"traceEvents", events}}.dump();
  return trace;
}

const std::vector<Step> kSteps = {
    // A 127-token prompt (127 / 16 ms of a_proj), then its first decode attends to 128 keys (a_proj 1 ms,
    // sparse_mla 2 ms): priced right only when the decode's context comes from the prefill before it.
    {"0p127@0", 127, 127.0 / 16, 0},
    {"0d1", 1, 1, 2},
    {"1p127@0", 127, 127.0 / 16, 0},
    {"1d1", 1, 1, 2},
    {"2p63@0", 63, 4, 0},  // below the first row: its latency
    {"2d1", 1, 1, 1}};

}  // namespace

TEST_CASE("a run made from known per-op scales and step overhead gives them back", "[trace_fit]") {
  const fs::path dir = profile_dir();
  const fs::path trace = write_trace(dir, kSteps);
  const TraceFit f =
      fit_trace({.trace = trace.string(), .profile = dir.string(), .hardware = "", .speed_of = ""});
  CHECK(f.steps == 6);
  CHECK(f.gap_s == 0);
  REQUIRE(f.ops.size() == 2);
  CHECK(f.ops[0].op == "a_proj");
  CHECK(f.ops[0].steps == 6);
  CHECK(f.ops[0].scale == Approx(kAProjScale).epsilon(1e-3));
  CHECK(f.ops[1].op == "sparse_mla");
  CHECK(f.ops[1].steps == 3);  // the decodes: no prefill rows price it
  CHECK(f.ops[1].scale == Approx(kSparseMlaScale).epsilon(1e-3));
  CHECK(f.scales[size_t(Op::kSparseMla)] == Approx(kSparseMlaScale).epsilon(1e-3));
  CHECK(f.op_time_scale >= kAProjScale);  // over every op: between the two
  CHECK(f.op_time_scale <= kSparseMlaScale);
  CHECK(f.scales[size_t(Op::kRmsnorm)] == f.op_time_scale);  // an op the run did not price
  CHECK(f.step_cpu_overhead_s == Approx(kOverheadMs * 1e-3).epsilon(1e-3));
  CHECK(f.with_fit.mape < 1e-3);
  CHECK(f.with_fit.stretched_time_share == 0);
  CHECK(f.with_profile.mape > 0.4);  // the profile as written: scales 1, overhead 0
  // Per step: what it ran and its times, in trace order; the CSV holds the same.
  REQUIRE(f.step_fits.size() == 6);
  const StepFit& decode = f.step_fits[1];
  CHECK(decode.step == 1);
  CHECK(decode.busy_groups == 1);
  CHECK(decode.decode_rows == 1);
  CHECK(decode.prefill_rows == 0);
  CHECK(decode.tokens == 1);
  CHECK(decode.measured_s == Approx((kAProjScale * 1 + kSparseMlaScale * 2 + kOverheadMs) * 1e-3));
  CHECK(decode.fitted_s == Approx(decode.measured_s).epsilon(1e-3));
  CHECK(decode.profile_s == Approx(3e-3));  // a_proj 1 ms + sparse_mla 2 ms, scales 1, no overhead
  CHECK(f.step_fits[0].prefill_rows == 1);
  CHECK(f.step_fits[0].tokens == 127);
  const fs::path csv = dir / "steps.csv";
  write_step_fits(csv.string(), f);
  std::ifstream in(csv);
  std::string header, first, second;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  CHECK(header ==
        "step,busy_groups,decode_rows,prefill_rows,tokens,measured_ms,profile_ms,fitted_ms,fitted_error");
  CHECK(second.rfind("1,1,1,0,1,8.5000,3.0000,8.5", 0) == 0);
  CHECK_THROWS_AS(write_step_fits((dir / "no" / "such" / "steps.csv").string(), f), InputError);
  write_trace_fit(dir.string(), f, trace.string());
  const auto p = load_op_profile(dir.string());
  CHECK(p->param(TimingParam::kOpTimeScale) == Approx(f.op_time_scale));
  CHECK(p->param(TimingParam::kStepCpuOverheadS) == Approx(f.step_cpu_overhead_s));
  const std::array<double, kOpCount> loaded = own_op_scales(*p);
  CHECK(loaded[size_t(Op::kAProj)] == Approx(f.ops[0].scale));
  CHECK(loaded[size_t(Op::kSparseMla)] == Approx(f.ops[1].scale));
  CHECK(loaded[size_t(Op::kRmsnorm)] == Approx(f.op_time_scale));
  // Calibrated once, the profile prices the run as it went: refitting finds every scale 1 again.
  const TraceFit again =
      fit_trace({.trace = trace.string(), .profile = dir.string(), .hardware = "", .speed_of = ""});
  CHECK(again.with_profile.mape < 1e-3);
  CHECK(again.ops[1].scale == Approx(f.ops[1].scale));  // fitted against the raw ops, not the scaled ones
}

TEST_CASE("a slow step from a busy neighbour moves the fitted scales little", "[trace_fit]") {
  const fs::path dir = profile_dir();
  std::vector<Step> steps = kSteps;
  for (int i = 0; i < 3; ++i) steps.insert(steps.end(), kSteps.begin(), kSteps.end());
  const fs::path trace = write_trace(dir, steps);
  // Stretch one decode step's sparse_mla span tenfold, and its step with it.
  nlohmann::json doc;
  std::ifstream(trace) >> doc;
  nlohmann::json* step = nullptr;
  for (auto& e : doc["traceEvents"]) {
    if (e["name"] == "step") step = &e;
    if (e["name"] == "sparse_mla") {
      const double extra_us = e["dur"].get<double>() * 9;
      e["dur"] = e["dur"].get<double>() + extra_us;
      (*step)["dur"] = (*step)["dur"].get<double>() + extra_us;
      break;
    }
  }
  std::ofstream(trace) << doc.dump();
  const TraceFit f =
      fit_trace({.trace = trace.string(), .profile = dir.string(), .hardware = "", .speed_of = ""});
  REQUIRE(f.ops.size() == 2);
  CHECK(f.ops[1].scale == Approx(kSparseMlaScale).epsilon(1e-3));          // the weighted median ignores it
  CHECK(f.ops[1].measured_s > 1.5 * kSparseMlaScale * f.ops[1].priced_s);  // the sum does not
  CHECK(f.step_cpu_overhead_s == Approx(kOverheadMs * 1e-3).epsilon(1e-3));
  // The stretched step is the one the fit misses, and what it holds of the run is reported.
  CHECK(f.with_fit.stretched_time_share > 0.1);
  CHECK(f.with_fit.stretched_time_share < 0.5);
}

TEST_CASE("trace calibration needs a readable trace and an own profile", "[trace_fit]") {
  const fs::path dir = profile_dir();
  CHECK_THROWS_AS(
      fit_trace(
          {.trace = (dir / "none.json").string(), .profile = dir.string(), .hardware = "", .speed_of = ""}),
      InputError);
  CHECK_THROWS_AS(
      fit_trace(
          {.trace = (dir / "none.json").string(), .profile = "h200-sglang", .hardware = "", .speed_of = ""}),
      InputError);
  // A trace with steps only (--trace-detail step) has no op spans to fit the scales from.
  const fs::path steps_only = write_trace(dir, kSteps, false);
  try {
    fit_trace({.trace = steps_only.string(), .profile = dir.string(), .hardware = "", .speed_of = ""});
    FAIL("a trace without op spans was accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("--trace-detail op") != std::string::npos);
  }
}

TEST_CASE("calibration records the run's speed probe, and --speed-of prices the profile at another run's",
          "[trace_fit]") {
  const fs::path dir = profile_dir();
  const fs::path trace = write_trace(dir, kSteps);
  std::ofstream(dir / "metrics.json") << R"({"run": {"mode": "real", "speed_probe_s": 0.04}})";
  const TraceFit f =
      fit_trace({.trace = trace.string(), .profile = dir.string(), .hardware = "", .speed_of = ""});
  REQUIRE(f.run_speed_probe_s);
  CHECK(*f.run_speed_probe_s == Approx(0.04));
  write_trace_fit(dir.string(), f, trace.string());
  CHECK(load_op_profile(dir.string())->param(TimingParam::kSpeedProbeS) == Approx(0.04));
  // A run whose machine ran the probe twice as long: the calibrated profile priced at its speed is twice
  // the measured steps (the profile's own figures), while the fit against the raw ops is unchanged.
  const fs::path slow = dir / "slow-run";
  fs::create_directories(slow);
  std::ofstream(slow / "metrics.json") << R"({"run": {"mode": "real", "speed_probe_s": 0.08}})";
  const TraceFit at_speed = fit_trace(
      {.trace = trace.string(), .profile = dir.string(), .hardware = "", .speed_of = slow.string()});
  CHECK(at_speed.with_profile.mape == Approx(1.0).epsilon(1e-2));
  CHECK(at_speed.ops[0].scale == Approx(f.ops[0].scale));
  CHECK(at_speed.step_fits[1].profile_s == Approx(2 * at_speed.step_fits[1].measured_s).epsilon(1e-2));
  const fs::path sim = dir / "sim-run";
  fs::create_directories(sim);
  std::ofstream(sim / "metrics.json") << R"({"run": {"mode": "sim"}})";
  CHECK_THROWS_WITH(
      fit_trace({.trace = trace.string(), .profile = dir.string(), .hardware = "", .speed_of = sim.string()}),
      Catch::Contains("run.speed_probe_s"));
}

}  // namespace tokenline
