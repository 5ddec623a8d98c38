// Trace calibration (`tokenline calibrate --trace run/trace.json --profile DIR`): fits an own profile's
// per-step overhead terms from a measured run. Each measured step's batch is priced by the profile's ops
// (step_cost with the overhead terms at 0); what the run spent beyond that is the overhead:
//   step_cpu_overhead_s = median over steps of (measured step - priced ops)     [inside the step: batch
//                         building, rank threads, timers]
//                       + median gap between a step's end and the next step's start while work is
//                         queued [the scheduler's plan and commit, recording]
// The sim lays steps back to back, so both parts go into the one per-step term it adds to every step.
#pragma once

#include <cstdint>
#include <string>

namespace tokenline {

struct TraceFitOptions {
  std::string trace;     // the run's trace.json (op detail: each step's batch)
  std::string profile;   // an own profile directory (its ops table and measured_on)
  std::string hardware;  // hardware preset or JSON; empty: <profile>/hardware.json
  bool write = false;    // write the fitted terms into <profile>/profile.json's timing
};

struct TraceFit {
  int64_t steps = 0;               // measured steps priced
  double in_step_s = 0;            // median (measured - priced)
  double gap_s = 0;                // median gap between consecutive busy steps
  double step_cpu_overhead_s = 0;  // in_step_s + gap_s (>= 0)
  double mape_before = 0;          // per-step MAPE of priced ops alone against the measured steps
  double mape_after = 0;           // ... of priced ops + in_step_s
};

// Throws InputError for an unreadable trace, a trace without batches, or a profile without an ops table.
TraceFit fit_trace(const TraceFitOptions& options);

// Rewrites <profile>/profile.json's timing.step_cpu_overhead_s with the fit (value and source).
void write_trace_fit(const std::string& profile_dir, const TraceFit& fit, const std::string& trace);

}  // namespace tokenline
