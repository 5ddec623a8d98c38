#include "cli/preset_names.h"

#include <algorithm>
#include <filesystem>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/time_source_transfer.h"
#include "engine/model/model_config.h"
#include "topologies/cluster_loader.h"
#include "topologies/hardware_loader.h"

namespace tokenline::cli {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// topologies' rule (preset_source.cpp): a value with '/' or ending ".json" is a path, the loader's to judge.
bool topology_path(const std::string& v) {
  const std::string ext = ".json";
  return v.find('/') != std::string::npos ||
         (v.size() >= ext.size() && v.compare(v.size() - ext.size(), ext.size(), ext) == 0);
}

void refuse(const char* option, const std::string& value, const std::vector<std::string>& names,
            const std::string& or_path) {
  const std::string closest = closest_name(value, names);
  throw InputError(option, "one of " + join(names) + or_path,
                   "'" + value + "'" + (closest.empty() ? "" : "; did you mean " + closest + "?"));
}

bool known(const std::string& v, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), v) != names.end();
}

}  // namespace

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& given, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, given.size() / 3) + 1;
  for (const std::string& n : names) {
    const size_t d = edit_distance(given, n);
    if (d < best_distance) {
      best_distance = d;
      best = n;
    }
  }
  return best;
}

void check_preset_flags(const PresetFlags& f) {
  if (!f.model.empty() && !known(f.model, model_preset_names()) && !exists(f.model))
    refuse("--model", f.model, model_preset_names(), ", or a config.json path");
  if (!f.hardware.empty() && !topology_path(f.hardware) && !known(f.hardware, hardware_presets()))
    refuse("--hardware", f.hardware, hardware_presets(), ", or a hardware JSON path");
  if (!f.cluster.empty() && !topology_path(f.cluster) && !known(f.cluster, cluster_presets()))
    refuse("--cluster", f.cluster, cluster_presets(), ", or a cluster JSON path");
  // "transfer:<profile>" names another GPU's profile carried to this one (cost/time_source_transfer.h).
  const std::string profile =
      is_transfer_name(f.profile) ? f.profile.substr(kTransferPrefix.size()) : f.profile;
  if (!profile.empty() && !known(profile, embedded_profile_names()) && !exists(profile))
    refuse("--profile", f.profile, embedded_profile_names(), ", or a profile directory (transfer:<either>)");
  if (!f.engine.empty() && !known(f.engine, engine_names())) refuse("--engine", f.engine, engine_names(), "");
}

}  // namespace tokenline::cli
