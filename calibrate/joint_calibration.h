// Joint calibration: one fit of engine-level terms over several point files, each simulated on its own
// hardware with its own profile (issue 43 item 5: terms that describe the engine's CPU and transfer path are
// fitted once per engine and carried to every GPU). The objective is the one-file objective over the union
// of every file's (model, mode) groups, so each group of each file weighs the same; the search, its start
// (the first file's profile) and the per-file figures are deterministic. Only profile timing terms may be
// fitted jointly (a hardware field belongs to one GPU), and every profile must be of one engine. Each file
// is also predicted with the terms fitted on the other files only (leave-one-file-out), which says whether
// one GPU's rows support what the others fit. Writes calibration.json, and a profile.json per file whose
// profile is a directory or file, into out_dir.
#pragma once

#include <string>
#include <vector>

#include "calibrate/bounded_search.h"
#include "calibrate/point_evaluator.h"

namespace tokenline {

// One file of a joint fit, as `--joint POINTS:HARDWARE:PROFILE` names it.
struct JointFile {
  std::string points_path;
  std::string hardware;  // preset or JSON path
  std::string profile;   // embedded name, directory or profile.json
};

// "POINTS:HARDWARE:PROFILE" -> its file; throws InputError("--joint", the form, found).
JointFile parse_joint_file(const std::string& spec);

struct JointCalibrationOptions {
  std::vector<JointFile> files;  // at least two
  std::string models_dir;
  std::string fit_names;           // empty: predict only
  std::string only_mode;           // "agg" or "disagg": only those rows of every file; "": all
  bool leave_one_file_out = true;  // fit without each file, predict it
  bool keep_overloaded = false;
  SearchOptions search;
  EvaluatorOptions evaluator;  // out_dir, jobs, sim (binary, requests per client); hardware per file
};

// Returns the process exit code (0; 1 when every simulation failed). Throws InputError on bad input.
int run_joint_calibration(const JointCalibrationOptions& options);

}  // namespace tokenline
