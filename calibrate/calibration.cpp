#include "calibrate/calibration.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

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

std::vector<size_t> all_indices(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// The fitted parameters' values in the base hardware or the profile (embedded or a directory; else the
// profile format's default), clamped into their bounds: the search's start.
std::vector<double> start_values(const std::vector<FitParameter>& fit, const std::string& hardware,
                                 const std::string& profile) {
  const Json hw = Json::parse(resolve_preset(hardware, "hardware").text);
  const std::shared_ptr<const OpProfile> timing = profile.empty() ? nullptr : load_op_profile(profile);
  std::vector<double> v;
  for (const FitParameter& p : fit) {
    double x = p.profile_default;
    switch (p.target) {
      case FitTarget::kHardware:
        x = hw.at(p.group).at(p.field).at("value").get<double>();
        break;
      case FitTarget::kProfileSet:
        if (const std::optional<TimingParam> param = find_timing_param(p.field); timing && param)
          x = timing->param(*param);
        break;
    }
    v.push_back(std::clamp(x, p.lower, p.upper));
  }
  return v;
}

// "+mtpK" when the row's own sim_args run K MTP draft tokens, else "".
std::string mtp_suffix(const std::vector<std::string>& sim_args) {
  const std::string drafts = option_value(sim_args, "--mtp");
  return drafts.empty() || drafts == "0" ? std::string() : "+mtp" + drafts;
}

// Each point's layout as the tables show it (MTP runs apart); maps every point once, so a bad layout
// stops the run early.
std::vector<std::string> point_layouts(const std::vector<E2ePoint>& points, const std::string& path) {
  std::vector<std::string> out;
  for (const E2ePoint& p : points) {
    const std::string where = path + ":" + std::to_string(p.line);
    if (p.mode == E2eMode::kAggregated) {
      out.push_back(parallel_name(p.agg, where) + mtp_suffix(p.sim_args));
    } else {
      const auto workers = [](const E2eLayout& l) {
        return l.workers_recorded ? std::to_string(l.workers) : std::string("?");
      };
      out.push_back(workers(p.prefill) + "P" + parallel_name(p.prefill, where + ": prefill") + "/" +
                    workers(p.decode) + "D" + parallel_name(p.decode, where + ": decode") +
                    mtp_suffix(p.sim_args));
    }
  }
  return out;
}

std::vector<double> fit_on(PointEvaluator& evaluator, const std::vector<FitParameter>& fit,
                           const std::vector<double>& start, const std::vector<size_t>& which,
                           const SearchOptions& search) {
  std::vector<SearchBounds> bounds;
  for (const FitParameter& p : fit) bounds.push_back({p.lower, p.upper, p.log_scale});
  return coordinate_descent([&](const std::vector<double>& x) { return evaluator.objective(x, which); },
                            bounds, start, search);
}

std::string values_text(const std::vector<FitParameter>& fit, const std::vector<double>& values) {
  std::string s;
  for (size_t i = 0; i < fit.size(); ++i) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%s%s=%.4g", s.empty() ? "" : " ", fit[i].name.c_str(), values[i]);
    s += buf;
  }
  return s;
}

Json groups_json(const std::vector<GroupError>& groups) {
  Json a = Json::array();
  for (const GroupError& g : groups) {
    Json o = {{"model", g.model}, {"mode", std::string(to_string(g.mode))}};
    if (!g.layout.empty()) o["layout"] = g.layout;  // the by-deployment groups
    o.update({{"deployment_recorded", g.apart != SetApart::kDeploymentUnrecorded},
              {"prefill_overloaded", g.apart == SetApart::kPrefillOverloaded},
              {"points", g.points},
              {"failed", g.failed},
              {"ttft_mape", g.ttft_mape},
              {"tpot_mape", g.tpot_mape},
              {"e2e_mape", g.e2e_mape}});
    a.push_back(std::move(o));
  }
  return a;
}

// One fitted parameter as calibration.json (and a profile copy) records it.
Json parameter_json(const FitParameter& p, double start, double value) {
  return {
      {"value", value},
      {"start", start},
      {"lower", p.lower},
      {"upper", p.upper},
      {"target", p.target == FitTarget::kHardware ? p.group + "." + p.field : "profile timing " + p.field},
      {"why", p.why},
      {"fitted_by", "tokenline calibrate"}};
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

void write_outputs(const CalibrationOptions& o, const PointEvaluator& ev, const Outcome& r) {
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

// Marks the points whose measured rate needs more than kMaxPrefillLoad times the prefill their instance
// has (prefill_load.h) and prints each: they are reported apart and not fitted, unless --keep-overloaded.
void mark_prefill_overloaded(std::vector<E2ePoint>& points, const PointModels& models,
                             const CalibrationOptions& o) {
  PrefillPricing pricing(o.evaluator.hardware, o.profile);
  for (E2ePoint& p : points) {
    if (!deployment_recorded(p)) continue;
    const PrefillLoad l = pricing.load(p, models.config_for(p));
    if (l.load() <= kMaxPrefillLoad) continue;
    p.prefill_overloaded = !o.keep_overloaded;
    std::printf(
        "line %lld: prefill load %.2f - %.1f requests/s measured x %.1f ms priced per %lld-token prompt over "
        "%d lane(s): more than %.1fx what the instance can prefill%s\n",
        static_cast<long long>(p.line), l.load(), l.requests_per_s, 1e3 * l.prefill_s,
        static_cast<long long>(p.isl), l.lanes, kMaxPrefillLoad,
        o.keep_overloaded ? " (kept: --keep-overloaded)" : "; set apart");
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
  mark_prefill_overloaded(points, models, o);
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
  write_outputs(o, ev, r);
  return all_failed(r.before) ? 1 : 0;
}

}  // namespace tokenline
