// `tokenline calibrate`: predicts end-to-end measurements (the silicon CSV format of e2e-silicon.csv)
// with `tokenline sim`, one child process per point, prints predicted vs measured and the MAPE per model
// and mode, and with --fit fits the named bounded parameters (calibrate/calibration.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "calibrate/joint_calibration.h"
#include "calibrate/prefill_load.h"
#include "calibrate/process_pool.h"
#include "calibrate/trace_fit.h"
#include "cli/command.h"
#include "cli/preset_names.h"
#include "common/input_error.h"
#include "cost/op_profile.h"
#include "topologies/hardware_loader.h"

namespace tokenline::cli {
namespace {

struct CalibrateArgs {
  CalibrationOptions options;
  int jobs = 0;  // 0: the CPUs this process may use
  bool no_fit = false;
  bool no_lomo = false;
  std::string sim_args;            // extra `tokenline sim` options for every point, split at spaces
  std::string mixed_steps = "on";  // aggregated points: on, or the profile engine's default (engine)
  std::string trace;  // --trace: fit an own profile's per-step overhead from a run (calibrate/trace_fit.h)
  std::string steps_csv;  // --steps-csv: with --trace, each step measured vs predicted
  std::string speed_of;   // --speed-of: with --trace, price the profile's own figures at a run's speed
  bool hardware_given = false;
  std::string engine;              // --engine: the profile <hardware>-<engine> for every point
  std::vector<std::string> joint;  // --joint POINTS:HARDWARE:PROFILE, repeated: one fit over every file
  std::string only_mode;           // --only-mode agg|disagg: with --joint, those rows of every file
  std::string joint_conflict;      // the first option given that --joint replaces ("": none)
};

// --trace run/trace.json --profile DIR: the fit printed, and written into DIR/profile.json.
void run_trace(const CalibrateArgs& a) {
  if (a.options.profile.empty())
    throw InputError("--trace", "a --profile directory written by tokenline profile", "no --profile");
  const TraceFitOptions o{.trace = a.trace,
                          .profile = a.options.profile,
                          .hardware = a.hardware_given ? a.options.evaluator.hardware : "",
                          .speed_of = a.speed_of};
  const TraceFit f = fit_trace(o);
  write_trace_fit(o.profile, f, o.trace);
  if (!a.steps_csv.empty()) write_step_fits(a.steps_csv, f);
  std::printf("steps %lld\ngap_s %.9g\nop_time_scale %.6g\n", static_cast<long long>(f.steps), f.gap_s,
              f.op_time_scale);
  for (const OpFit& op : f.ops)
    std::printf("op_scale %s %.6g (%lld steps, measured %.6g s, priced %.6g s)\n", op.op.c_str(), op.scale,
                static_cast<long long>(op.steps), op.measured_s, op.priced_s);
  std::printf(
      "step_cpu_overhead_s %.9g\n"
      "step_mape_profile %.4f\nstep_p90_profile %.4f\nstretched_time_share_profile %.4f\n"
      "step_mape_fit %.4f\nstep_p90_fit %.4f\nstretched_time_share_fit %.4f\n",
      f.step_cpu_overhead_s, f.with_profile.mape, f.with_profile.p90, f.with_profile.stretched_time_share,
      f.with_fit.mape, f.with_fit.p90, f.with_fit.stretched_time_share);
  std::fprintf(stderr,
               "tokenline calibrate: %zu op scales, op_time_scale = %.4g, step_cpu_overhead_s = %.6g s%s "
               "written to %s/profile.json\n",
               f.ops.size(), f.op_time_scale, f.step_cpu_overhead_s,
               f.run_speed_probe_s ? ", the run's speed probe" : "", o.profile.c_str());
}

// This executable, so each point runs the same build of `tokenline sim`.
std::string own_binary() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError("tokenline calibrate", "a readable /proc/self/exe", ec.message());
  return self.string();
}

// --joint F1:H1:P1 --joint F2:H2:P2 ...: one fit of engine terms over every file (joint_calibration.h).
void run_joint(CalibrateArgs& a) {
  if (!a.joint_conflict.empty())
    throw InputError("--joint",
                     "no " + a.joint_conflict + " (each --joint names its points, hardware and profile)",
                     a.joint_conflict);
  JointCalibrationOptions j;
  for (const std::string& spec : a.joint) j.files.push_back(parse_joint_file(spec));
  const CalibrationOptions& o = a.options;
  if (o.models_dir.empty() || o.evaluator.out_dir.empty())
    throw InputError("tokenline calibrate --joint", "--models-dir and --out", "a missing one");
  if (a.jobs < 0) throw InputError("--jobs", "a count >= 0 (0: every CPU)", std::to_string(a.jobs));
  if (!(o.search.tolerance > 0 && o.search.tolerance < 1))
    throw InputError("--fit-tolerance", "a fraction in (0, 1)", std::to_string(o.search.tolerance));
  j.models_dir = o.models_dir;
  j.fit_names = a.no_fit ? "" : o.fit_names;
  j.only_mode = a.only_mode;
  j.leave_one_file_out = !a.no_lomo;
  j.keep_overloaded = o.keep_overloaded;
  j.search = o.search;
  j.evaluator = o.evaluator;
  j.evaluator.jobs = a.jobs > 0 ? a.jobs : available_cpus();
  j.evaluator.sim.mixed_steps = a.mixed_steps == "on";
  j.evaluator.sim.binary = own_binary();
  std::istringstream words(a.sim_args);
  for (std::string w; words >> w;) j.evaluator.sim.extra_args.push_back(w);
  const int rc = run_joint_calibration(j);
  if (rc != 0) std::exit(rc);
}

void run(CalibrateArgs& a) {
  if (!a.joint.empty()) {
    run_joint(a);
    return;
  }
  if (!a.only_mode.empty())
    throw InputError("--only-mode", "--joint (a one-file calibration reads every row)", a.only_mode);
  if (!a.trace.empty()) {
    run_trace(a);
    return;
  }
  CalibrationOptions& o = a.options;
  check_preset_flags({.hardware = o.evaluator.hardware, .profile = o.profile, .engine = a.engine});
  if (!a.engine.empty())
    o.profile = profile_for_engine(o.profile, a.engine, load_hardware(o.evaluator.hardware));
  if (o.points_path.empty() || o.models_dir.empty() || o.evaluator.out_dir.empty())
    throw InputError("tokenline calibrate", "--points, --models-dir and --out (or --trace and --profile)",
                     "a missing one");
  if (a.no_fit) o.fit_names.clear();
  o.leave_one_model_out = !a.no_lomo;
  if (a.jobs < 0) throw InputError("--jobs", "a count >= 0 (0: every CPU)", std::to_string(a.jobs));
  o.evaluator.jobs = a.jobs > 0 ? a.jobs : available_cpus();
  if (o.evaluator.sim.requests_per_client < 1)
    throw InputError("--requests-per-client", "a count >= 1",
                     std::to_string(o.evaluator.sim.requests_per_client));
  if (o.evaluator.sim.warmup_per_client < 0)
    throw InputError("--warmup-per-client", "a count >= 0",
                     std::to_string(o.evaluator.sim.warmup_per_client));
  o.evaluator.sim.mixed_steps = a.mixed_steps == "on";
  if (!(o.search.tolerance > 0 && o.search.tolerance < 1))
    throw InputError("--fit-tolerance", "a fraction in (0, 1)", std::to_string(o.search.tolerance));
  o.evaluator.sim.binary = own_binary();
  o.evaluator.sim.hardware =
      o.evaluator.hardware;  // every point's sim on --hardware (not only fitted copies)
  std::istringstream words(a.sim_args);
  for (std::string w; words >> w;) o.evaluator.sim.extra_args.push_back(w);
  const int rc = run_calibration(o);
  if (rc != 0) std::exit(rc);
}

void add_calibrate(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CalibrationOptions& o = a->options;
  CLI::App* cmd =
      app.add_subcommand("calibrate", "predict end-to-end measurements with sim; fit named parameters");
  cmd->add_option("--points", o.points_path, "e2e measurements, silicon CSV format (e2e-silicon.csv)");
  cmd->add_option("--models-dir", o.models_dir, "folder of <org>--<name>_config.json files");
  cmd->add_option("--out", o.evaluator.out_dir, "output directory (calibration.json, hardware.json)");
  cmd->add_option(
      "--trace", a->trace,
      "a tokenline run trace.json: fit the --profile (an own profile)'s per-step overhead instead");
  cmd->add_option("--steps-csv", a->steps_csv,
                  "with --trace: write each step's rows, measured and predicted time to this CSV");
  cmd->add_option(
      "--speed-of", a->speed_of,
      "with --trace: price the profile's own figures (step_*_profile) at this run's machine speed "
      "(its metrics.json's speed probe over the profile's), as sim --speed-of does");
  cmd->add_option("--hardware", o.evaluator.hardware, "base hardware preset or JSON path")
      ->capture_default_str();
  cmd->add_option("--engine", a->engine,
                  "sglang | vllm | trtllm: the profile <hardware>-<engine> for every point (as --profile)");
  cmd->add_option("--profile", o.profile,
                  "op profile passed to every sim run (its profile.json gets the fit)");
  cmd->add_option(
      "--fit", o.fit_names,
      "parameters to fit, comma-separated: kernel_launch_s, collective_launch_s, gemm_efficiency, "
      "attention_efficiency, hbm_efficiency (hardware); step_cpu_overhead_s, eager_launch_gap_s, "
      "step_cpu_per_request_s, step_floor_per_layer_s, eager_host_per_mla_layer_s, request_latency_s, "
      "first_token_latency_s, pd_first_token_latency_s, pd_handoff_per_token_s (profile timing, with "
      "--profile); "
      "none: predict only");
  cmd->add_option("--joint", a->joint,
                  "POINTS:HARDWARE:PROFILE, repeated: one fit of profile timing terms over every file, each "
                  "simulated on its hardware with its profile of one engine (instead of --points, "
                  "--hardware, --profile); prints the values to carry to every profile of the engine")
      ->take_all();
  cmd->add_option("--only-mode", a->only_mode, "with --joint: only the rows of this mode of every file")
      ->check(CLI::IsMember({"agg", "disagg"}));
  cmd->add_flag("--no-fit", a->no_fit, "predict only, even with --fit (the validation benchmark)");
  cmd->add_flag("--no-lomo", a->no_lomo,
                "skip the leave-one-model-out fits (with --joint: the leave-one-file-out fits)");
  cmd->add_flag("--loho", o.leave_one_hardware_out,
                "leave-one-hardware-out: predict the points again with the engine's profile of the nearest "
                "other GPU transferred to --hardware (no profile of it, no fitted value)");
  char load[16];
  std::snprintf(load, sizeof load, "%.1f", kMaxPrefillLoad);
  cmd->add_flag("--keep-overloaded", o.keep_overloaded,
                "count the points whose measured rate needs more prefill than their instance has at the "
                "pricing's kernel speeds (prefill load > " +
                    std::string(load) + "; set apart as mode agg! by default)");
  cmd->add_option("--fit-tolerance", o.search.tolerance, "golden-section stop: fraction of each interval")
      ->capture_default_str();
  cmd->add_option("--sweeps", o.search.sweeps, "coordinate descent passes")->capture_default_str();
  cmd->add_option("--jobs", a->jobs, "simulations at once (0: every CPU)")->capture_default_str();
  cmd->add_option("--requests-per-client", o.evaluator.sim.requests_per_client,
                  "measured requests per client (aiperf --num-requests 20 x concurrency in aiconfigurator's "
                  "benchmark template)")
      ->capture_default_str();
  cmd->add_option("--warmup-per-client", o.evaluator.sim.warmup_per_client,
                  "warm-up requests per client, run first and left out of the means (aiperf "
                  "--warmup-request-count 2 x concurrency)")
      ->capture_default_str();
  cmd->add_option("--mixed-steps", a->mixed_steps,
                  "aggregated points: prefill chunks and decodes in one step (on: the deployments "
                  "aiconfigurator generates for SGLang set enable_mixed_chunk) or the profile engine's "
                  "default (engine)")
      ->check(CLI::IsMember({"on", "engine"}))
      ->capture_default_str();
  cmd->add_option("--prefill-margin", o.evaluator.sim.prefill_margin,
                  "every point's sim gets --max-prefill-tokens isl + this (aiconfigurator's generator sets "
                  "max_prefill_tokens = isl + 1500); < 0: the engine's own limit")
      ->capture_default_str();
  cmd->add_option("--min-requests", o.evaluator.sim.min_requests, "at least this many requests per point")
      ->capture_default_str();
  cmd->add_option(
      "--sim-args", a->sim_args,
      "extra sim options for every point, e.g. \"--mixed-steps on\" (what-if runs of the engine)");
  cmd->add_flag("--keep-runs", o.evaluator.keep_runs, "keep every simulation's outputs under <out>/runs");
  cmd->add_flag("--progress", o.evaluator.progress, "one line per evaluation on stderr");
  cmd->callback([a, cmd] {
    a->hardware_given = cmd->count("--hardware") > 0;
    for (const char* name : {"--points", "--hardware", "--profile", "--engine", "--loho", "--trace"}) {
      if (a->joint_conflict.empty() && cmd->count(name) > 0) a->joint_conflict = name;
    }
    run(*a);
  });
}

const CommandRegistration kRegistration("calibrate", add_calibrate);

}  // namespace
}  // namespace tokenline::cli
