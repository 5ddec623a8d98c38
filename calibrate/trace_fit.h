// Trace calibration (`tokenline calibrate --trace run/trace.json --profile DIR`): fits an own profile's
// op scales and step overhead from a measured run (op detail: each step's batch and op spans). Each step's
// batch is priced by the profile's ops with every scale 1 and no overhead; per op, its scale is the median
// over the steps that price it of measured / priced (weighted by the priced time; the measured time is the
// op's spans on the rank the pricing finds busiest), and op_time_scale the same over every op (the fallback
// for ops the run did not price). step_cpu_overhead_s is the median of measured step - scaled priced ops,
// plus the median gap between steps where the trace has one (the sim lays steps back to back). Medians, not
// sums: a shared machine's neighbours stretch some steps, and the fit should not follow them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/step_cost.h"

namespace tokenline {

struct TraceFitOptions {
  std::string trace;     // the run's trace.json (op detail: each step's batch)
  std::string profile;   // an own profile directory (its ops table and measured_on)
  std::string hardware;  // hardware preset or JSON; empty: <profile>/hardware.json
  // A run (dir or metrics.json) whose machine speed prices with_profile: the profile's loaded terms x that
  // run's speed probe over the profile's (sim --speed-of). Empty: as loaded. The fit itself is unchanged.
  std::string speed_of;
};

// Per-step relative error |predicted - measured| / measured over the run's steps (fractions).
struct StepError {
  double mape = 0;
  double p90 = 0;  // nearest rank
  // The share of the run's measured time in steps that took over twice their prediction: on a shared
  // machine, the steps its neighbours stretched, which request latencies add up but no step model follows.
  double stretched_time_share = 0;
};

// One op's fit over the steps that price it: their summed measured and priced times, and the scale.
struct OpFit {
  std::string op;  // ledger op name
  int64_t steps = 0;
  double measured_s = 0, priced_s = 0;
  double scale = 1;  // the steps' median of measured / priced, each weighted by its priced time
};

// One measured step next to its predictions: what it ran (over every attention group) and its time.
struct StepFit {
  int64_t step = 0;         // the trace's step index
  int32_t busy_groups = 0;  // attention groups with rows
  int64_t decode_rows = 0, prefill_rows = 0, tokens = 0;
  double measured_s = 0;
  double profile_s = 0;  // priced with the profile's terms as loaded
  double fitted_s = 0;   // priced with the fitted terms
};

struct TraceFit {
  int64_t steps = 0;                      // measured steps priced
  double gap_s = 0;                       // median gap between consecutive steps
  double op_time_scale = 1;               // fitted over every op (the fallback for ops the run did not price)
  std::vector<OpFit> ops;                 // per op the run priced and measured, in ledger order
  std::array<double, kOpCount> scales{};  // per ledger op: its OpFit's scale, else op_time_scale
  double step_cpu_overhead_s = 0;         // fitted (+ gap_s)
  StepError with_profile;                 // the run's steps priced with the profile's terms as loaded
  StepError with_fit;                     // ... with the fitted terms
  std::vector<StepFit> step_fits;         // per priced step, in trace order
  // The fitted run's machine speed probe (its metrics.json, when it recorded one): the speed the fitted
  // terms describe, written into the profile as timing.speed_probe_s.
  std::optional<double> run_speed_probe_s;
};

// Throws InputError for an unreadable trace, a trace without batches, or a profile without an ops table.
TraceFit fit_trace(const TraceFitOptions& options);

// Writes one CSV row per priced step (step, busy_groups, decode_rows, prefill_rows, tokens, measured_ms,
// profile_ms, fitted_ms, fitted_error): where in the run the model is off. Throws InputError if unwritable.
void write_step_fits(const std::string& path, const TraceFit& fit);

// Rewrites <profile>/profile.json's timing.op_time_scale, op_scales and step_cpu_overhead_s with the fit,
// and speed_probe_s with the run's probe where it recorded one.
void write_trace_fit(const std::string& profile_dir, const TraceFit& fit, const std::string& trace);

}  // namespace tokenline
