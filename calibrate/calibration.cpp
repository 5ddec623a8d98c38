#include "calibrate/calibration.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "calibrate/calibration_parts.h"
#include "calibrate/calibration_report.h"
#include "calibrate/prefill_load.h"
#include "calibrate/sim_point.h"
#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/time_source_transfer.h"
#include "topologies/hardware_loader.h"
#include "topologies/preset_source.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::vector<double> fit_on(PointEvaluator& evaluator, const std::vector<FitParameter>& fit,
                           const std::vector<double>& start, const std::vector<size_t>& which,
                           const SearchOptions& search) {
  return fit_values([&](const std::vector<double>& x) { return evaluator.objective(x, which); }, fit, start,
                    search);
}

struct LeftOut {
  std::string models;                 // "DeepSeek-R1 + DeepSeek-V3"
  std::vector<double> values;         // fitted without the model
  std::vector<GroupError> before;     // the model's groups with the start values
  std::vector<GroupError> predicted;  // ... with the values fitted without it
};

// Fits once per architecture with its points left out (all models of that shape: DeepSeek-R1 and -V3 go
// together, else one would predict its twin), then predicts them. `start` (the profile's values) gives the
// left-out model's "before"; each fit starts from `blind` (the values no fit chose: the profile format's
// defaults), because the search keeps its start where the objective is flat, and the profile's values may
// have been fitted on the very model left out (a term only that model identifies would come back unchanged).
std::vector<LeftOut> leave_one_model_out(PointEvaluator& ev, const PointModels& models,
                                         const std::vector<FitParameter>& fit,
                                         const std::vector<double>& start, const std::vector<double>& blind,
                                         const SearchOptions& search) {
  const std::vector<E2ePoint>& points = ev.points();
  std::vector<std::string> shapes;  // first-appearance order
  for (const E2ePoint& p : points) {
    if (std::find(shapes.begin(), shapes.end(), models.architecture_of(p)) == shapes.end())
      shapes.push_back(models.architecture_of(p));
  }
  std::vector<LeftOut> out;
  for (const std::string& shape : shapes) {
    std::vector<size_t> rest, held;
    std::string label;
    for (size_t i = 0; i < points.size(); ++i) {
      const bool left_out = models.architecture_of(points[i]) == shape;
      if (left_out || set_apart(points[i]) == SetApart::kNo) (left_out ? held : rest).push_back(i);
      const std::string name = model_label(points[i].model_path);
      if (left_out && label.find(name) == std::string::npos) label += (label.empty() ? "" : " + ") + name;
    }
    if (rest.empty()) continue;
    const std::vector<double> values = fit_on(ev, fit, blind, rest, search);
    out.push_back({label, values, group_errors(points, held, ev.predict(start, held)),
                   group_errors(points, held, ev.predict(values, held))});
  }
  return out;
}

void print_left_out(std::FILE* out, const std::vector<FitParameter>& fit, const std::vector<LeftOut>& rows) {
  std::fprintf(
      out, "\nleave-one-model-out (fit without the model and its same-architecture twins, predict it):\n");
  std::fprintf(out, "%-26s %-7s %6s | %9s %9s %8s | %9s %9s %8s | %s\n", "model", "mode", "points",
               "TTFT_MAPE", "TPOT_MAPE", "E2E_MAPE", "lomo_TTFT", "lomo_TPOT", "lomo_E2E",
               "fitted without it");
  for (const LeftOut& l : rows) {
    for (size_t i = 0; i < l.before.size(); ++i) {
      const GroupError& b = l.before[i];
      const GroupError& p = l.predicted[i];
      std::fprintf(out, "%-26s %-7s %6d | %8.1f%% %8.1f%% %7.1f%% | %8.1f%% %8.1f%% %7.1f%% | %s\n",
                   b.model.c_str(), group_mode(b).c_str(), b.points, 100 * b.ttft_mape, 100 * b.tpot_mape,
                   100 * b.e2e_mape, 100 * p.ttft_mape, 100 * p.tpot_mape, 100 * p.e2e_mape,
                   values_text(fit, l.values).c_str());
    }
  }
}

// Leave-one-hardware-out: the run's points priced as a GPU without a profile of the engine is, by the
// engine's profile on the nearest other GPU transferred to this one (cost/time_source_transfer.h): no table
// and no term of a profile measured on this hardware, no value fitted here.
struct HardwareLeftOut {
  std::string hardware;               // the run's hardware, left out
  std::string engine;                 // the profile's engine
  std::string source;                 // the profile transferred ("": the engine has none on another GPU)
  std::vector<GroupError> in_sample;  // the points as the run priced them (after the fit, if any)
  std::vector<GroupError> predicted;  // ... by the transferred source
};

// `args` with every --profile's value (also --profile=P) replaced by `profile`.
std::vector<std::string> with_profile(std::vector<std::string> args, const std::string& profile) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--profile" && i + 1 < args.size()) args[i + 1] = profile;
    if (args[i].rfind("--profile=", 0) == 0) args[i] = "--profile=" + profile;
  }
  return args;
}

HardwareLeftOut leave_one_hardware_out(const CalibrationOptions& o, const std::vector<E2ePoint>& points,
                                       const PointModels& models, const EvaluatorOptions& eo,
                                       const std::vector<GroupError>& in_sample) {
  HardwareLeftOut out;
  const Hardware hardware = load_hardware(eo.hardware);
  out.hardware = hardware.name;
  out.engine = load_op_profile(o.profile)->engine_name;
  out.in_sample = in_sample;
  const std::vector<std::string> sources = transfer_sources(out.engine, hardware);
  if (sources.empty()) return out;
  out.source = sources.front();
  EvaluatorOptions lo = eo;
  lo.out_dir = eo.out_dir + "/leave-one-hardware-out";
  lo.sim.extra_args = with_profile(eo.sim.extra_args, transfer_name(out.source));
  PointEvaluator ev(points, models, {}, lo);
  const std::vector<size_t> all = all_indices(points.size());
  out.predicted = group_errors(points, all, ev.predict({}, all));
  return out;
}

void print_hardware_left_out(std::FILE* out, const HardwareLeftOut& h) {
  if (h.source.empty()) {
    std::fprintf(out, "\nleave-one-hardware-out: no %s profile on a GPU other than %s to transfer\n",
                 h.engine.c_str(), h.hardware.c_str());
    return;
  }
  std::fprintf(
      out,
      "\nleave-one-hardware-out (%s's points priced by %s transferred to %s: no %s profile, no value "
      "fitted here):\n",
      h.hardware.c_str(), h.source.c_str(), h.hardware.c_str(), h.hardware.c_str());
  std::fprintf(out, "%-9s %-26s %-7s %6s | %9s %9s %8s | %9s %9s %8s | %s\n", "hardware", "model", "mode",
               "points", "TTFT_MAPE", "TPOT_MAPE", "E2E_MAPE", "loho_TTFT", "loho_TPOT", "loho_E2E",
               "transferred from");
  for (size_t i = 0; i < h.predicted.size() && i < h.in_sample.size(); ++i) {
    const GroupError& b = h.in_sample[i];
    const GroupError& p = h.predicted[i];
    std::fprintf(out, "%-9s %-26s %-7s %6d | %8.1f%% %8.1f%% %7.1f%% | %8.1f%% %8.1f%% %7.1f%% | %s\n",
                 h.hardware.c_str(), b.model.c_str(), group_mode(b).c_str(), b.points, 100 * b.ttft_mape,
                 100 * b.tpot_mape, 100 * b.e2e_mape, 100 * p.ttft_mape, 100 * p.tpot_mape, 100 * p.e2e_mape,
                 h.source.c_str());
  }
}

struct Outcome {
  std::vector<FitParameter> fit;
  std::vector<double> start, fitted;
  std::vector<GroupError> before, after;
  std::vector<GroupError> before_by_deployment, after_by_deployment;  // the same split by layout
  std::vector<LeftOut> left_out;
  std::optional<HardwareLeftOut> hardware_left_out;
};

// Each model's family as tokenline read its config (ModelConfig::hf_model_type, by model label): what
// `scripts/validate-fidelity --accuracy` records beside the model's errors, so that a run of another model of
// the family can say how the family was predicted (calibrate/accuracy_table.h).
Json model_types_json(const std::vector<E2ePoint>& points, const PointModels& models) {
  Json types = Json::object();
  for (const E2ePoint& p : points) {
    const std::string& key = models.architecture_of(p);
    types[model_label(p.model_path)] = key.substr(0, key.find('/'));
  }
  return types;
}

void write_outputs(const CalibrationOptions& o, const PointEvaluator& ev, const Outcome& r,
                   const Json& model_types) {
  Json params = Json::object();
  for (size_t i = 0; i < r.fit.size(); ++i)
    params[r.fit[i].name] = parameter_json(r.fit[i], r.start[i], r.fitted[i]);
  Json lomo = Json::array();
  for (const LeftOut& l : r.left_out) {
    Json values = Json::object();
    for (size_t i = 0; i < r.fit.size(); ++i) values[r.fit[i].name] = l.values[i];
    lomo.push_back({{"left_out", l.models},
                    {"values", values},
                    {"before", groups_json(l.before)},
                    {"predicted", groups_json(l.predicted)}});
  }
  Json loho = nullptr;  // not asked for
  if (r.hardware_left_out) {
    const HardwareLeftOut& h = *r.hardware_left_out;
    loho = {{"hardware", h.hardware},
            {"engine", h.engine},
            {"transferred_from", h.source},
            {"in_sample", groups_json(h.in_sample)},
            {"predicted", groups_json(h.predicted)}};
  }
  char objective[192];
  std::snprintf(objective, sizeof objective,
                "mean over (model, mode) groups not set apart (deployment recorded, prefill load <= %.1f) of "
                "(TTFT MAPE + TPOT MAPE) / 2, each point's APE capped at 100%%",
                kMaxPrefillLoad);
  const Json j = {{"points", o.points_path},
                  {"hardware", o.evaluator.hardware},
                  {"profile", o.profile},
                  {"model_types", model_types},
                  {"objective", objective},
                  {"parameters", params},
                  {"before", groups_json(r.before)},
                  {"after", groups_json(r.after)},
                  {"before_by_deployment", groups_json(r.before_by_deployment)},
                  {"after_by_deployment", groups_json(r.after_by_deployment)},
                  {"leave_one_model_out", lomo},
                  {"leave_one_hardware_out", loho},
                  {"simulations", ev.simulations()}};
  const std::string dir = o.evaluator.out_dir;
  std::ofstream(dir + "/calibration.json") << j.dump(2) << "\n";
  if (!r.fit.empty()) std::ofstream(dir + "/hardware.json") << ev.hardware_json(r.fitted);
  std::error_code ec;
  const fs::path profile =
      fs::is_directory(o.profile, ec) ? fs::path(o.profile) / "profile.json" : fs::path(o.profile);
  if (!r.fit.empty() && !o.profile.empty() && fs::is_regular_file(profile, ec)) {
    std::ifstream in(profile);
    Json p = Json::parse(in);
    for (size_t i = 0; i < r.fit.size(); ++i) {
      if (r.fit[i].target != FitTarget::kProfileSet) continue;
      p["timing"][r.fit[i].field] = {{"value", r.fitted[i]},
                                     {"unit", "s"},
                                     {"why", "fitted by tokenline calibrate to " + o.points_path +
                                                 " within [" + std::to_string(r.fit[i].lower) + ", " +
                                                 std::to_string(r.fit[i].upper) + "]: " + r.fit[i].why}};
    }
    p["calibration"] = {{"points", o.points_path}, {"parameters", params}};
    std::ofstream(dir + "/profile.json") << p.dump(2) << "\n";
  }
}

bool all_failed(const std::vector<GroupError>& groups) {
  for (const GroupError& g : groups) {
    if (g.failed < g.points) return false;
  }
  return true;
}

}  // namespace

int run_calibration(const CalibrationOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (o.leave_one_hardware_out && o.profile.empty())
    throw InputError("--loho", "a --profile or --engine (the engine whose other GPUs' profiles transfer)",
                     "none");
  std::vector<E2ePoint> points = read_e2e_points(o.points_path);
  fs::create_directories(o.evaluator.out_dir);
  const PointModels models(points, o.points_path, o.models_dir, o.evaluator.out_dir);
  print_client_from_source(stdout, points);
  mark_prefill_overloaded(stdout, points, models, o.evaluator.hardware, o.profile, o.keep_overloaded);
  const std::vector<std::string> layouts = point_layouts(points, o.points_path);
  Outcome r;
  if (!o.fit_names.empty()) r.fit = parse_fit_list(o.fit_names);
  for (const FitParameter& p : r.fit) {
    if (p.target == FitTarget::kProfileSet && o.profile.empty())
      throw InputError("--fit " + p.name, "--profile (a profile timing parameter needs a profile)", "none");
  }
  const bool any_counted = std::any_of(points.begin(), points.end(),
                                       [](const E2ePoint& p) { return set_apart(p) == SetApart::kNo; });
  if (!r.fit.empty() && !any_counted)
    throw InputError(o.points_path,
                     "at least one point to fit on whose deployment is recorded (disaggregated rows need "
                     "prefill_num_workers and decode_num_workers) and whose rate its instance can prefill "
                     "(or --keep-overloaded)",
                     "none");
  EvaluatorOptions eo = o.evaluator;
  if (!o.profile.empty()) {
    eo.sim.extra_args.insert(eo.sim.extra_args.end(), {"--profile", o.profile});
  } else if (std::none_of(eo.sim.extra_args.begin(), eo.sim.extra_args.end(), [](const std::string& a) {
               const std::string name = a.substr(0, a.find('='));  // --profile=P as --profile P
               return name == "--profile" || name == "--engine" || name == "--roofline" || name == "--ideal";
             })) {
    // Without a profile calibrate fits and predicts the roofline; sim's default would pick a shipped one.
    eo.sim.extra_args.push_back("--roofline");
  }
  PointEvaluator ev(points, models, r.fit, eo);
  const std::vector<size_t> all = all_indices(points.size());
  r.start = start_values(r.fit, eo.hardware, o.profile);
  const std::vector<SimPrediction> before = ev.predict(r.start, all);
  r.before = group_errors(points, all, before);
  r.before_by_deployment = deployment_errors(points, all, layouts, before);
  std::vector<SimPrediction> after;
  if (!r.fit.empty()) {
    std::vector<size_t> counted;  // the fit follows only rows not set apart
    for (size_t i : all)
      if (set_apart(points[i]) == SetApart::kNo) counted.push_back(i);
    r.fitted = fit_on(ev, r.fit, r.start, counted, o.search);
    after = ev.predict(r.fitted, all);
    r.after = group_errors(points, all, after);
    r.after_by_deployment = deployment_errors(points, all, layouts, after);
  }
  print_point_table(stdout, points, all, layouts, before, after);
  print_failures(stderr, o.points_path, points, all, before, "before the fit");
  print_failures(stderr, o.points_path, points, all, after, "after the fit");
  std::printf("\n");
  print_group_table(stdout, r.before, r.after);
  if (r.before_by_deployment.size() > r.before.size()) {  // some model ran more than one deployment
    std::printf("\n");
    print_group_table(stdout, r.before_by_deployment, r.after_by_deployment);
  }
  if (!r.fit.empty()) {
    std::printf("\nobjective %.4f -> %.4f; start %s; fitted %s\n", fit_objective(r.before),
                fit_objective(r.after), values_text(r.fit, r.start).c_str(),
                values_text(r.fit, r.fitted).c_str());
    if (o.leave_one_model_out) {
      const std::vector<double> blind = start_values(r.fit, eo.hardware, "");
      r.left_out = leave_one_model_out(ev, models, r.fit, r.start, blind, o.search);
    }
    print_left_out(stdout, r.fit, r.left_out);
  }
  if (o.leave_one_hardware_out) {
    r.hardware_left_out = leave_one_hardware_out(o, points, models, eo, r.fit.empty() ? r.before : r.after);
    print_hardware_left_out(stdout, *r.hardware_left_out);
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr,
               "tokenline calibrate: %zu points, %lld simulations, %.1f s wall, %d at once; outputs in %s\n",
               points.size(), static_cast<long long>(ev.simulations()), wall_s, eo.jobs, eo.out_dir.c_str());
  write_outputs(o, ev, r, model_types_json(points, models));
  return all_failed(r.before) ? 1 : 0;
}

}  // namespace tokenline
