// Trace calibration (`tokenline calibrate --trace run/trace.json --profile DIR`): fits an own profile's
// two step terms from a measured run. Each measured step's batch is priced by the profile's ops (p_i,
// with both terms neutral); the fit is the least squares line
//   measured_i ~ op_time_scale x p_i + step_cpu_overhead_s
// (both >= 0; unweighted, so the fitted steps add up to the run's time): the scale is what the run's ops cost
// against the profiled ones (load, caches), the overhead what a step holds beyond its ops (batch building,
// rank threads, timers), plus the median gap between steps where the trace has one (the sim lays steps back
// to back).
#pragma once

#include <cstdint>
#include <string>

namespace tokenline {

struct TraceFitOptions {
  std::string trace;     // the run's trace.json (op detail: each step's batch)
  std::string profile;   // an own profile directory (its ops table and measured_on)
  std::string hardware;  // hardware preset or JSON; empty: <profile>/hardware.json
};

// Per-step relative error |predicted - measured| / measured over the run's steps (fractions).
struct StepError {
  double mape = 0;
  double p90 = 0;  // nearest rank
};

struct TraceFit {
  int64_t steps = 0;               // measured steps priced
  double gap_s = 0;                // median gap between consecutive steps
  double op_time_scale = 1;        // fitted
  double step_cpu_overhead_s = 0;  // fitted (+ gap_s)
  StepError with_profile;          // the run's steps priced with the profile's terms as loaded
  StepError with_fit;              // ... with the fitted terms
};

// Throws InputError for an unreadable trace, a trace without batches, or a profile without an ops table.
TraceFit fit_trace(const TraceFitOptions& options);

// Rewrites <profile>/profile.json's timing.op_time_scale and step_cpu_overhead_s with the fit.
void write_trace_fit(const std::string& profile_dir, const TraceFit& fit, const std::string& trace);

}  // namespace tokenline
