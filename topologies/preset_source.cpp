#include "topologies/preset_source.h"

#include <fstream>
#include <sstream>

#include "common/input_error.h"
#include "topologies/embedded_specs.h"

namespace tokenline {
namespace {

bool looks_like_path(const std::string& s) {
  const std::string ext = ".json";
  return s.find('/') != std::string::npos ||
         (s.size() >= ext.size() && s.compare(s.size() - ext.size(), ext.size(), ext) == 0);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::vector<std::string> preset_names(const std::string& folder) {
  std::vector<std::string> names;
  const std::string prefix = folder + "/";
  const std::string ext = ".json";
  for (const EmbeddedText& f : topologies_embedded_specs()) {
    if (f.path.substr(0, prefix.size()) != prefix) continue;
    std::string_view stem = f.path.substr(prefix.size());
    stem.remove_suffix(ext.size());
    names.emplace_back(stem);
  }
  return names;  // sorted: the generator sorts the file list
}

PresetSource resolve_preset(const std::string& name_or_path, const std::string& folder) {
  if (!looks_like_path(name_or_path)) {
    const std::string rel = folder + "/" + name_or_path + ".json";
    if (auto text = find_embedded(topologies_embedded_specs(), rel))
      return PresetSource{std::string(*text), "topologies/" + rel + " (embedded)"};
    throw InputError(folder + " '" + name_or_path + "'",
                     "a preset (" + join(preset_names(folder)) + ") or a path to a .json file",
                     "no such preset");
  }
  std::ifstream in(name_or_path, std::ios::binary);
  if (!in)
    throw InputError(name_or_path, "a readable " + folder + " JSON file", "a file that cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return PresetSource{text.str(), name_or_path};
}

}  // namespace tokenline
