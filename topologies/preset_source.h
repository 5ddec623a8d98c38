// PresetSource: resolves a preset name or a path to the text of a topology JSON file (private to
// tl_topologies). Presets come from the embedded copies, paths from disk.
#pragma once

#include <string>
#include <vector>

namespace tokenline {

struct PresetSource {
  std::string text;
  std::string file;  // what error messages name: "topologies/hardware/h200.json (embedded)" or the path
};

// folder: "hardware" or "clusters". Throws InputError for an unknown name or an unreadable file.
PresetSource resolve_preset(const std::string& name_or_path, const std::string& folder);

// Preset names in `folder`, sorted, without ".json".
std::vector<std::string> preset_names(const std::string& folder);

}  // namespace tokenline
