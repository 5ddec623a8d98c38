// CalibrationReport: the error figures of predictions against E2ePoints, and the tables calibrate prints.
// APE = |predicted - measured| / measured; a point whose simulation failed counts as 100% error.
// MAPE is reported per (model, mode) group; the fit objective averages the groups, so a model with many
// points (Llama-3.1-8B's 46) does not outweigh one with few, and counts each point's APE at most 100% (as a
// failed run): a point predicted more than twice off says its deployment is not the one the CSV records (an
// unrecorded MTP or KV setting), and uncapped it would steer every fitted term towards it.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "calibrate/e2e_point.h"
#include "calibrate/sim_point.h"

namespace tokenline {

struct GroupError {
  std::string model;  // model_label(model_path)
  E2eMode mode = E2eMode::kAggregated;
  SetApart apart = SetApart::kNo;  // set_apart of its points (a model's rows set apart form a group apart)
  std::string layout;  // deployment_errors only: the points' layout as the point table prints it ("tp8")
  int points = 0;
  int failed = 0;
  double ttft_mape = 0;  // fractions, 0.1 = 10%
  double tpot_mape = 0;
  double e2e_mape = 0;     // of request_latency_ms: the closed loop's request rate (reported, not fitted)
  double ttft_capped = 0;  // the same with each APE capped at 100% (what the fit objective uses)
  double tpot_capped = 0;
};

// A point's mean request latency, E2E = TTFT + (mean output - 1) x TPOT, one rule for the measured and the
// predicted means (the output's mean under the row's length_range_ratio). C clients in a closed loop complete
// C / E2E requests a second, so E2E's error is the error of the request rate the deployment sustains - what
// plan ranks deployments by - where TTFT's error at load is mostly the queue in front of the engine.
double request_latency_ms(const E2ePoint& point, double ttft_ms, double tpot_ms);

// Groups in first-appearance order of the points `which`; predictions index for index with `which`.
std::vector<GroupError> group_errors(const std::vector<E2ePoint>& points, const std::vector<size_t>& which,
                                     const std::vector<SimPrediction>& predictions);

// The same split further by deployment: `layouts` index for index with `points` (the point table's layout
// column: "tp8", "1Ptp8/9Dtp8"), so one model's tp2 and tp8 rows, or one PD recipe's, are reported apart.
std::vector<GroupError> deployment_errors(const std::vector<E2ePoint>& points,
                                          const std::vector<size_t>& which,
                                          const std::vector<std::string>& layouts,
                                          const std::vector<SimPrediction>& predictions);

// The group's mode as tables print it: "agg", "disagg", "disagg?" (deployment not recorded), "agg!"
// (more prefill than the instance has).
std::string group_mode(const GroupError& group);

// Mean over the groups not set apart of (capped TTFT MAPE + capped TPOT MAPE) / 2.
double fit_objective(const std::vector<GroupError>& groups);

// One row per point: measured, predicted and ratio for TTFT and TPOT, and the E2E ratio; `after` may be empty
// (no fit).
void print_point_table(std::FILE* out, const std::vector<E2ePoint>& points, const std::vector<size_t>& which,
                       const std::vector<std::string>& layouts, const std::vector<SimPrediction>& before,
                       const std::vector<SimPrediction>& after);

// One line per failed simulation among `predictions` (index for index with `which`): the point's file and
// line, its model and the run's reason (exit code and the last line of its log). `pass` names the run
// ("before the fit", "after the fit"). Nothing when every run succeeded.
// One line where rows took their client's protocol from silicon_data_source (E2ePoint::client_from_source):
// how many, and what that protocol is; nothing otherwise.
void print_client_from_source(std::FILE* out, const std::vector<E2ePoint>& points);

void print_failures(std::FILE* out, const std::string& points_path, const std::vector<E2ePoint>& points,
                    const std::vector<size_t>& which, const std::vector<SimPrediction>& predictions,
                    const char* pass);

// MAPE per group, before and (when not empty) after; groups from deployment_errors get a layout column
// (and leave the notes on set-apart rows to the per-model table).
void print_group_table(std::FILE* out, const std::vector<GroupError>& before,
                       const std::vector<GroupError>& after);

}  // namespace tokenline
