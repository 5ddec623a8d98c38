#include "traces/run_speed.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/input_error.h"

namespace tokenline {
namespace {

std::string metrics_path(const std::string& run) {
  return std::filesystem::is_directory(run) ? (std::filesystem::path(run) / "metrics.json").string() : run;
}

// run.speed_probe_s of the metrics.json at `path`; nullopt when absent, InputError when unreadable.
std::optional<double> probe_in(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "a run's metrics.json", "a file that cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(path, "valid JSON (a run's metrics.json)", "unreadable");
  if (!j.contains("run") || !j["run"].is_object() || !j["run"].contains("speed_probe_s")) return std::nullopt;
  const nlohmann::json& v = j["run"]["speed_probe_s"];
  if (!v.is_number() || !(v.get<double>() > 0))
    throw InputError(path + ": run.speed_probe_s", "a number > 0 (seconds)", v.dump());
  return v.get<double>();
}

}  // namespace

double run_speed_probe_s(const std::string& run) {
  const std::string path = metrics_path(run);
  const std::optional<double> probe = probe_in(path);
  if (!probe)
    throw InputError(path + ": run.speed_probe_s",
                     "the machine's speed probe of a `tokenline run` (a simulation records none)", "none");
  return *probe;
}

std::optional<double> trace_run_speed_probe_s(const std::string& trace) {
  const std::filesystem::path metrics = std::filesystem::path(trace).parent_path() / "metrics.json";
  if (!std::filesystem::exists(metrics)) return std::nullopt;
  return probe_in(metrics.string());
}

}  // namespace tokenline
