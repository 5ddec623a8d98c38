// Loading Hardware from a preset name ("h200", compiled into the binary) or from a JSON file path.
// Every number in the file carries a "source"; efficiency factors also a "why" (see hardware/h200.json).
#pragma once

#include <string>
#include <vector>

#include "topologies/hardware.h"

namespace tokenline {

// A preset name resolves to topologies/hardware/<name>.json as embedded at build time; anything else
// containing '/' or ending in ".json" is read from disk. Throws InputError (file + field, expected vs
// found) for an unknown preset, an unreadable file, a missing or unknown field, or a bad number.
Hardware load_hardware(const std::string& name_or_path);

// Parses one hardware document; `file` names it in error messages.
Hardware parse_hardware(const std::string& text, const std::string& file);

// Names of the embedded presets, sorted ("b200", "h100", "h200").
std::vector<std::string> hardware_presets();

}  // namespace tokenline
