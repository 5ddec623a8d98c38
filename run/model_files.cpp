#include "run/model_files.h"

#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>

#include "common/input_error.h"
#include "common/input_limits.h"

namespace tokenline {
namespace {

constexpr int64_t kMaxConfigFileBytes = int64_t{16} << 20;  // a config.json is a few KB
constexpr int64_t kMaxQuantFileBytes = int64_t{16} << 20;   // hf_quant_config.json: a few KB to a few MB

std::string read_text(const std::string& path, int64_t max_bytes, const std::string& what) {
  std::optional<std::string> body = read_bounded_file(path, max_bytes, path);
  if (!body) throw InputError(path, "a readable " + what, "a file that cannot be opened");
  return std::move(*body);
}

}  // namespace

CheckpointFiles read_checkpoint_files(const std::string& path) {
  CheckpointFiles files;
  files.config_path = path;
  files.config = read_text(path, kMaxConfigFileBytes, "config.json");
  // ModelOpt's hf_quant_config.json beside config.json; beside a config kept under another name,
  // <name>_hf_quant_config.json next to <name>_config.json (how aiconfigurator's model_configs and
  // calibrate's models folders keep a checkpoint's two files).
  std::error_code ec;
  const std::filesystem::path config(path);
  std::filesystem::path quant = config.parent_path() / "hf_quant_config.json";
  const std::string name = config.filename().string();
  constexpr std::string_view kConfigSuffix = "_config.json";
  if (name.size() > kConfigSuffix.size() && name.ends_with(kConfigSuffix)) {
    const std::filesystem::path named =
        config.parent_path() / (name.substr(0, name.size() - kConfigSuffix.size()) + "_hf_quant_config.json");
    if (std::filesystem::is_regular_file(named, ec)) quant = named;
  }
  if (std::filesystem::is_regular_file(quant, ec)) {
    files.quant_path = quant.string();
    files.quant = read_text(files.quant_path, kMaxQuantFileBytes, "hf_quant_config.json");
  }
  return files;
}

ModelConfig load_hf_config(const std::string& path) {
  return parse_hf_model(read_checkpoint_files(path));
}

HfModelRead read_hf_config(const std::string& path) {
  return parse_hf_config(read_checkpoint_files(path));
}

ModelConfig load_model(const std::string& name_or_path) {
  for (const std::string& n : model_preset_names()) {
    if (n == name_or_path) return model_preset(n);
  }
  std::error_code ec;
  std::filesystem::path p(name_or_path);
  if (std::filesystem::is_directory(p, ec)) p /= "config.json";
  if (!std::filesystem::is_regular_file(p, ec)) {
    std::string names;
    for (const std::string& n : model_preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw InputError("--model", "a preset (" + names + ") or a config.json path", "'" + name_or_path + "'");
  }
  return load_hf_config(p.string());
}

ModelConfig load_model(const std::string& name_or_path, const std::string& weights_format) {
  ModelConfig m = load_model(name_or_path);
  if (!weights_format.empty()) override_weight_format(m, weights_format);
  return m;
}

}  // namespace tokenline
