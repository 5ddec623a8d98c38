#include "calibrate/joint_calibration.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "calibrate/calibration_parts.h"
#include "calibrate/calibration_report.h"
#include "calibrate/point_models.h"
#include "common/input_error.h"
#include "cost/op_profile.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// One file of the fit: its points (the rows it fits on), their models and their evaluator. Held by pointer:
// the evaluator keeps references to the points and models.
struct FileRun {
  JointFile file;
  std::vector<E2ePoint> points;
  std::unique_ptr<PointModels> models;
  std::unique_ptr<PointEvaluator> evaluator;
  std::vector<std::string> layouts;
  std::vector<GroupError> before, after;
  std::vector<SimPrediction> before_runs, after_runs;
};

// The rows of `path` the joint fit uses: those of `only_mode` (all when empty) that are not set apart; each
// row left out is printed with why.
std::vector<E2ePoint> fitted_rows(const JointFile& f, const std::string& only_mode,
                                  const std::vector<E2ePoint>& read) {
  std::vector<E2ePoint> kept;
  for (const E2ePoint& p : read) {
    if (!only_mode.empty() && to_string(p.mode) != only_mode) continue;
    switch (set_apart(p)) {
      case SetApart::kNo:
        kept.push_back(p);
        break;
      case SetApart::kDeploymentUnrecorded:
        std::printf("%s:%lld: deployment not recorded; not simulated in a joint fit\n", f.points_path.c_str(),
                    static_cast<long long>(p.line));
        break;
      case SetApart::kPrefillOverloaded:
        std::printf("%s:%lld: prefill overloaded; not simulated in a joint fit\n", f.points_path.c_str(),
                    static_cast<long long>(p.line));
        break;
    }
  }
  return kept;
}

std::unique_ptr<FileRun> open_file(const JointFile& f, size_t k, const JointCalibrationOptions& o,
                                   const std::vector<FitParameter>& fit) {
  auto run = std::make_unique<FileRun>();
  run->file = f;
  std::vector<E2ePoint> read = read_e2e_points(f.points_path);
  const std::string out_dir = o.evaluator.out_dir + "/file" + std::to_string(k);
  fs::create_directories(out_dir);
  const PointModels all_models(read, f.points_path, o.models_dir, out_dir);
  mark_prefill_overloaded(stdout, read, all_models, f.hardware, f.profile, o.keep_overloaded);
  run->points = fitted_rows(f, o.only_mode, read);
  if (run->points.empty())
    throw InputError(f.points_path,
                     "at least one row" + (o.only_mode.empty() ? "" : " of mode " + o.only_mode) +
                         " whose deployment is recorded and whose rate its instance can prefill",
                     "none");
  run->models = std::make_unique<PointModels>(run->points, f.points_path, o.models_dir, out_dir);
  run->layouts = point_layouts(run->points, f.points_path);
  EvaluatorOptions eo = o.evaluator;
  eo.out_dir = out_dir;
  eo.hardware = f.hardware;
  eo.sim.hardware = f.hardware;
  eo.sim.extra_args.insert(eo.sim.extra_args.end(), {"--profile", f.profile});
  run->evaluator = std::make_unique<PointEvaluator>(run->points, *run->models, fit, eo);
  return run;
}

// The files' groups at `values`, file after file (`skip`: a file left out, or none).
std::vector<GroupError> joint_groups(std::vector<std::unique_ptr<FileRun>>& files,
                                     const std::vector<double>& values, size_t skip) {
  std::vector<GroupError> groups;
  for (size_t k = 0; k < files.size(); ++k) {
    if (k == skip) continue;
    FileRun& f = *files[k];
    const std::vector<size_t> all = all_indices(f.points.size());
    const std::vector<GroupError> g = group_errors(f.points, all, f.evaluator->predict(values, all));
    groups.insert(groups.end(), g.begin(), g.end());
  }
  return groups;
}

double file_objective(FileRun& f, const std::vector<double>& values) {
  return f.evaluator->objective(values, all_indices(f.points.size()));
}

struct LeftOutFile {
  std::vector<double> values;  // fitted on the other files
  std::vector<GroupError> predicted;
};

void print_file(FileRun& f, size_t k) {
  std::printf("\n== file %zu: %s on %s, profile %s (%zu rows) ==\n", k, f.file.points_path.c_str(),
              f.file.hardware.c_str(), f.file.profile.c_str(), f.points.size());
  const std::vector<size_t> all = all_indices(f.points.size());
  print_point_table(stdout, f.points, all, f.layouts, f.before_runs, f.after_runs);
  print_failures(stderr, f.file.points_path, f.points, all, f.before_runs, "before the fit");
  print_failures(stderr, f.file.points_path, f.points, all, f.after_runs, "after the fit");
  std::printf("\n");
  print_group_table(stdout, f.before, f.after);
}

void print_left_out(const std::vector<FitParameter>& fit, std::vector<std::unique_ptr<FileRun>>& files,
                    const std::vector<LeftOutFile>& left) {
  std::printf("\nleave-one-file-out (fit on the other files, predict this one):\n");
  std::printf("%-5s %-26s %-8s %6s | %9s %9s | %9s %9s | %s\n", "file", "model", "mode", "points", "fit_TTFT",
              "fit_TPOT", "lofo_TTFT", "lofo_TPOT", "fitted without it");
  for (size_t k = 0; k < left.size(); ++k) {
    for (size_t i = 0; i < left[k].predicted.size() && i < files[k]->after.size(); ++i) {
      const GroupError& a = files[k]->after[i];
      const GroupError& p = left[k].predicted[i];
      std::printf("%-5zu %-26s %-8s %6d | %8.1f%% %8.1f%% | %8.1f%% %8.1f%% | %s\n", k, a.model.c_str(),
                  group_mode(a).c_str(), a.points, 100 * a.ttft_mape, 100 * a.tpot_mape, 100 * p.ttft_mape,
                  100 * p.tpot_mape, values_text(fit, left[k].values).c_str());
    }
  }
}

// A copy of the file's profile with the fitted terms, when the profile is a directory or a file (an
// embedded profile is carried by hand: the printed --profile-set line).
void write_profile(const FileRun& f, const std::string& dir, const std::vector<FitParameter>& fit,
                   const std::vector<double>& fitted, const Json& params, const std::string& points) {
  std::error_code ec;
  const fs::path path = fs::is_directory(f.file.profile, ec) ? fs::path(f.file.profile) / "profile.json"
                                                             : fs::path(f.file.profile);
  if (!fs::is_regular_file(path, ec)) return;
  std::ifstream in(path);
  Json p = Json::parse(in);
  for (size_t i = 0; i < fit.size(); ++i) {
    p["timing"][fit[i].field] = {
        {"value", fitted[i]},
        {"unit", "s"},
        {"why", "fitted jointly by tokenline calibrate to " + points + " within [" +
                    std::to_string(fit[i].lower) + ", " + std::to_string(fit[i].upper) + "]: " + fit[i].why}};
  }
  p["calibration"] = {{"points", points}, {"parameters", params}};
  std::ofstream(dir + "/profile.json") << p.dump(2) << "\n";
}

void write_outputs(const JointCalibrationOptions& o, std::vector<std::unique_ptr<FileRun>>& files,
                   const std::vector<FitParameter>& fit, const std::vector<double>& start,
                   const std::vector<double>& fitted, const std::vector<LeftOutFile>& left,
                   int64_t simulations) {
  Json params = Json::object();
  for (size_t i = 0; i < fit.size(); ++i) params[fit[i].name] = parameter_json(fit[i], start[i], fitted[i]);
  std::string all_points;
  Json per_file = Json::array();
  for (size_t k = 0; k < files.size(); ++k) {
    FileRun& f = *files[k];
    all_points += (all_points.empty() ? "" : ", ") + f.file.points_path + " (" + f.file.hardware + ")";
    Json j = {{"points", f.file.points_path},
              {"hardware", f.file.hardware},
              {"profile", f.file.profile},
              {"rows", f.points.size()},
              {"objective_before", file_objective(f, start)},
              {"objective_after", fit.empty() ? nullptr : Json(file_objective(f, fitted))},
              {"before", groups_json(f.before)},
              {"after", groups_json(f.after)}};
    if (k < left.size()) {
      Json values = Json::object();
      for (size_t i = 0; i < fit.size(); ++i) values[fit[i].name] = left[k].values[i];
      j["left_out"] = {{"values", values}, {"predicted", groups_json(left[k].predicted)}};
    }
    per_file.push_back(std::move(j));
  }
  const Json j = {
      {"joint", true},
      {"only_mode", o.only_mode},
      {"objective",
       "mean over every file's (model, mode) groups of (TTFT MAPE + TPOT MAPE) / 2, each point's APE capped "
       "at 100%; rows set apart are not simulated"},
      {"objective_before", fit_objective(joint_groups(files, start, files.size()))},
      {"objective_after",
       fit.empty() ? nullptr : Json(fit_objective(joint_groups(files, fitted, files.size())))},
      {"parameters", params},
      {"files", per_file},
      {"simulations", simulations}};
  std::ofstream(o.evaluator.out_dir + "/calibration.json") << j.dump(2) << "\n";
  if (fit.empty()) return;
  for (size_t k = 0; k < files.size(); ++k)
    write_profile(*files[k], o.evaluator.out_dir + "/file" + std::to_string(k), fit, fitted, params,
                  all_points);
}

void check_fit(const std::vector<FitParameter>& fit) {
  for (const FitParameter& p : fit) {
    if (p.target == FitTarget::kHardware)
      throw InputError("--fit " + p.name,
                       "a profile timing term (a joint fit spans GPUs; a hardware field belongs to one)",
                       "a field of the hardware file");
  }
}

// Every file's profile is of one engine: the joint terms are that engine's.
void check_one_engine(const std::vector<JointFile>& files) {
  const std::string first = load_op_profile(files.front().profile)->engine_name;
  for (const JointFile& f : files) {
    const std::string engine = load_op_profile(f.profile)->engine_name;
    if (engine != first)
      throw InputError("--joint " + f.points_path + ":" + f.hardware + ":" + f.profile,
                       "a profile of the engine " + first + " (the first --joint's: one engine's terms)",
                       engine);
  }
}

}  // namespace

JointFile parse_joint_file(const std::string& spec) {
  const size_t a = spec.find(':');
  const size_t b = a == std::string::npos ? a : spec.find(':', a + 1);
  const bool three = b != std::string::npos && spec.find(':', b + 1) == std::string::npos;
  JointFile f;
  if (three) f = {spec.substr(0, a), spec.substr(a + 1, b - a - 1), spec.substr(b + 1)};
  if (!three || f.points_path.empty() || f.hardware.empty() || f.profile.empty())
    throw InputError("--joint", "POINTS:HARDWARE:PROFILE (a points file, a hardware preset, a profile)",
                     "'" + spec + "'");
  return f;
}

int run_joint_calibration(const JointCalibrationOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (o.files.size() < 2)
    throw InputError("--joint", "at least two POINTS:HARDWARE:PROFILE files", std::to_string(o.files.size()));
  const std::vector<FitParameter> fit =
      o.fit_names.empty() ? std::vector<FitParameter>{} : parse_fit_list(o.fit_names);
  check_fit(fit);
  check_one_engine(o.files);
  fs::create_directories(o.evaluator.out_dir);
  std::vector<std::unique_ptr<FileRun>> files;
  for (size_t k = 0; k < o.files.size(); ++k) files.push_back(open_file(o.files[k], k, o, fit));
  const std::vector<double> start = start_values(fit, o.files.front().hardware, o.files.front().profile);
  for (size_t k = 1; k < files.size(); ++k) {
    const std::vector<double> own = start_values(fit, o.files[k].hardware, o.files[k].profile);
    if (own != start)
      std::printf("file %zu's profile holds %s; the search starts from file 0's %s\n", k,
                  values_text(fit, own).c_str(), values_text(fit, start).c_str());
  }
  const auto objective = [&files](const std::vector<double>& x) {
    return fit_objective(joint_groups(files, x, files.size()));
  };
  std::vector<double> fitted;
  if (!fit.empty()) fitted = fit_values(objective, fit, start, o.search);
  std::vector<LeftOutFile> left;
  if (!fit.empty() && o.leave_one_file_out) {
    const std::vector<double> blind = start_values(fit, o.files.front().hardware, "");
    for (size_t k = 0; k < files.size(); ++k) {
      const auto rest = [&files, k](const std::vector<double>& x) {
        return fit_objective(joint_groups(files, x, k));
      };
      LeftOutFile l{.values = fit_values(rest, fit, blind, o.search), .predicted = {}};
      FileRun& f = *files[k];
      const std::vector<size_t> all = all_indices(f.points.size());
      l.predicted = group_errors(f.points, all, f.evaluator->predict(l.values, all));
      left.push_back(std::move(l));
    }
  }
  int64_t simulations = 0;
  bool any_ran = false;
  for (size_t k = 0; k < files.size(); ++k) {
    FileRun& f = *files[k];
    const std::vector<size_t> all = all_indices(f.points.size());
    f.before_runs = f.evaluator->predict(start, all);
    f.before = group_errors(f.points, all, f.before_runs);
    if (!fit.empty()) {
      f.after_runs = f.evaluator->predict(fitted, all);
      f.after = group_errors(f.points, all, f.after_runs);
    }
    for (const GroupError& g : f.before) any_ran = any_ran || g.failed < g.points;
    print_file(f, k);
    simulations += f.evaluator->simulations();
  }
  if (!fit.empty()) {
    std::printf("\njoint objective %.4f -> %.4f; start %s; fitted %s\n", objective(start), objective(fitted),
                values_text(fit, start).c_str(), values_text(fit, fitted).c_str());
    for (size_t k = 0; k < files.size(); ++k)
      std::printf("file %zu objective %.4f -> %.4f (%s)\n", k, file_objective(*files[k], start),
                  file_objective(*files[k], fitted), files[k]->file.points_path.c_str());
    std::string sets;
    for (size_t i = 0; i < fit.size(); ++i) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s=%.4g", sets.empty() ? "" : ",", fit[i].field.c_str(), fitted[i]);
      sets += buf;
    }
    std::printf("carry to every %s profile: --profile-set %s\n",
                load_op_profile(o.files.front().profile)->engine_name.c_str(), sets.c_str());
    if (o.leave_one_file_out) print_left_out(fit, files, left);
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr,
               "tokenline calibrate: joint fit over %zu files, %lld simulations, %.1f s wall, %d at once; "
               "outputs in %s\n",
               files.size(), static_cast<long long>(simulations), wall_s, o.evaluator.jobs,
               o.evaluator.out_dir.c_str());
  write_outputs(o, files, fit, start, fitted, left, simulations);
  return any_ran ? 0 : 1;
}

}  // namespace tokenline
