// Calibration: `tokenline calibrate` end to end. Reads the e2e points, predicts each with today's
// parameters (the "before"), optionally fits the named parameters over all points (coordinate descent
// of golden-section searches, deterministic), predicts again (the "after"), and fits once more per model
// with that model (and any model of the same architecture, e.g. DeepSeek-V3 for DeepSeek-R1) left out to
// predict it (leave-one-model-out: the honest figure), and on request predicts every point with the
// engine's profile of the nearest other GPU transferred to the run's hardware (leave-one-hardware-out: what a
// GPU without a profile gets). Writes the fitted
// hardware file and calibration.json (values, bounds, why, figures) into out_dir.
#pragma once

#include <string>

#include "calibrate/bounded_search.h"
#include "calibrate/point_evaluator.h"

namespace tokenline {

struct CalibrationOptions {
  std::string points_path;
  std::string models_dir;
  std::string fit_names;  // "kernel_launch_s,collective_launch_s"; empty: no fit (validation only)
  bool leave_one_model_out = true;
  // Also predict the points with the transferred source built without any profile of their hardware (the
  // --hardware of the run): the engine's profile on the nearest other GPU (cost/time_source_transfer.h),
  // its own terms, no fitted value (leave-one-hardware-out). Needs a profile (its engine).
  bool leave_one_hardware_out = false;
  std::string profile;  // passed to every sim run as --profile; its profile.json is copied with the fit
  bool keep_overloaded =
      false;  // fit on points whose prefill load exceeds kMaxPrefillLoad too (prefill_load.h)
  SearchOptions search;
  EvaluatorOptions evaluator;  // out_dir, hardware, jobs, sim (binary, requests per client)
};

// Returns the process exit code (0; 1 when every simulation failed). Throws InputError on bad input.
int run_calibration(const CalibrationOptions& options);

}  // namespace tokenline
