#include "calibrate/point_evaluator.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "calibrate/calibration_report.h"
#include "calibrate/process_pool.h"
#include "topologies/preset_source.h"

namespace tokenline {
namespace {

namespace fs = std::filesystem;

std::string value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

PointEvaluator::PointEvaluator(const std::vector<E2ePoint>& points, const PointModels& models,
                               std::vector<FitParameter> fit, EvaluatorOptions options)
    : points_(points), models_(models), fit_(std::move(fit)), options_(std::move(options)) {
  base_hardware_text_ = resolve_preset(options_.hardware, "hardware").text;
}

std::string PointEvaluator::hardware_json(const std::vector<double>& values) const {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(base_hardware_text_);
  for (size_t i = 0; i < fit_.size(); ++i) {
    const FitParameter& p = fit_[i];
    if (p.target != FitTarget::kHardware) continue;
    nlohmann::ordered_json& entry = j[p.group][p.field];
    entry["value"] = values[i];
    entry["source"] = "tokenline calibrate: fitted to end-to-end measurements within [" +
                      value_text(p.lower) + ", " + value_text(p.upper) + "]; " + p.why;
  }
  return j.dump(2) + "\n";
}

std::vector<std::string> PointEvaluator::run_args(const std::vector<double>& values, const std::string& dir) {
  std::vector<std::string> extra;
  std::string sets;
  bool hardware = false;
  for (size_t i = 0; i < fit_.size(); ++i) {
    switch (fit_[i].target) {
      case FitTarget::kHardware:
        hardware = true;
        break;
      case FitTarget::kProfileSet:
        sets += (sets.empty() ? "" : ",") + fit_[i].field + "=" + value_text(values[i]);
        break;
    }
  }
  if (hardware) {
    const std::string path = dir + "/hardware.json";
    std::ofstream(path) << hardware_json(values);
    extra = {"--hardware", path};
  }
  if (!sets.empty()) extra.insert(extra.end(), {"--profile-set", sets});
  return extra;
}

std::vector<SimPrediction> PointEvaluator::predict(const std::vector<double>& values,
                                                   const std::vector<size_t>& which) {
  std::vector<size_t> missing;
  for (size_t i : which) {
    if (cache_.count({values, i}) == 0) missing.push_back(i);
  }
  if (!missing.empty()) {
    const std::string dir = options_.out_dir + "/runs/" + std::to_string(evaluations_++);
    fs::create_directories(dir);
    SimPointOptions sim = options_.sim;
    const std::vector<std::string> extra = run_args(values, dir);
    for (size_t k = 0; k + 1 < extra.size(); k += 2) {
      if (extra[k] == "--hardware")
        sim.hardware = extra[k + 1];
      else
        sim.extra_args.insert(sim.extra_args.end(), {extra[k], extra[k + 1]});
    }
    std::vector<ProcessJob> jobs;
    std::vector<std::string> outs;
    for (size_t i : missing) {
      outs.push_back(dir + "/line" + std::to_string(points_[i].line));
      fs::create_directories(outs.back());
      std::vector<std::string> argv = {sim.binary};
      for (std::string& a : sim_arguments(points_[i], models_.config_for(points_[i]), outs.back(), sim))
        argv.push_back(std::move(a));
      jobs.push_back({std::move(argv), outs.back() + "/log.txt"});
    }
    const std::vector<int> codes = run_processes(jobs, options_.jobs);
    for (size_t k = 0; k < missing.size(); ++k)
      cache_[{values, missing[k]}] =
          read_prediction(outs[k], codes[k], jobs[k].log_path, warmup_count(points_[missing[k]], sim));
    simulations_ += static_cast<int64_t>(missing.size());
    if (options_.progress) {
      std::string v;
      for (size_t i = 0; i < fit_.size(); ++i) v += " " + fit_[i].name + "=" + value_text(values[i]);
      std::fprintf(stderr, "tokenline calibrate: evaluation %lld: %zu simulations%s\n",
                   static_cast<long long>(evaluations_ - 1), missing.size(), v.c_str());
    }
    if (!options_.keep_runs) fs::remove_all(dir);
  }
  std::vector<SimPrediction> out;
  for (size_t i : which) out.push_back(cache_.at({values, i}));
  return out;
}

double PointEvaluator::objective(const std::vector<double>& values, const std::vector<size_t>& which) {
  return fit_objective(group_errors(points_, which, predict(values, which)));
}

}  // namespace tokenline
