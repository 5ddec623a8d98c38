// PointEvaluator: predictions of E2ePoints for given values of the fitted parameters. Each evaluation
// writes the hardware copy those values imply, runs one `tokenline sim` process per point (in parallel,
// ProcessPool) and reads back mean TTFT and TPOT. Results are cached by (values, point), so a search that
// revisits a value, or a leave-one-model-out fit over a subset, re-runs nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/e2e_point.h"
#include "calibrate/fit_parameter.h"
#include "calibrate/point_models.h"
#include "calibrate/sim_point.h"

namespace tokenline {

struct EvaluatorOptions {
  std::string out_dir;  // runs go to <out_dir>/runs/<evaluation>/line<N>/ (removed unless keep_runs)
  std::string hardware = "h200";  // the base hardware (preset or path) the fitted fields are written into
  int jobs = 1;                   // simulations at once
  bool keep_runs = false;
  bool progress = false;  // one line per evaluation on stderr
  SimPointOptions sim;
};

class PointEvaluator {
 public:
  // REQUIRES: every point's model resolves in `models` (constructed over the same points).
  PointEvaluator(const std::vector<E2ePoint>& points, const PointModels& models,
                 std::vector<FitParameter> fit, EvaluatorOptions options);

  // Predictions of the points `which` (indices into the points) with the fitted parameters at `values`
  // (one per fit parameter, in order); index for index with `which`.
  std::vector<SimPrediction> predict(const std::vector<double>& values, const std::vector<size_t>& which);

  // The hardware JSON text with `values` written into their fields (sources say they were fitted).
  std::string hardware_json(const std::vector<double>& values) const;

  // The fit objective (calibration_report.h) of the points `which` at `values`.
  double objective(const std::vector<double>& values, const std::vector<size_t>& which);

  const std::vector<E2ePoint>& points() const { return points_; }
  int64_t simulations() const { return simulations_; }

 private:
  std::vector<std::string> run_args(const std::vector<double>& values, const std::string& dir);

  const std::vector<E2ePoint>& points_;
  const PointModels& models_;
  std::vector<FitParameter> fit_;
  EvaluatorOptions options_;
  std::string base_hardware_text_;
  std::map<std::pair<std::vector<double>, size_t>, SimPrediction> cache_;
  int64_t evaluations_ = 0;
  int64_t simulations_ = 0;
};

}  // namespace tokenline
