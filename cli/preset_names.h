// "Did you mean": a preset name, an engine or a flag that is none of the known ones is refused with the
// closest known one, in one message (exit 2), before anything runs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tokenline::cli {

// Levenshtein distance.
size_t edit_distance(const std::string& a, const std::string& b);

// The closest of `names` to `given` within a third of its length (at least 2 edits); "" when none is.
std::string closest_name(const std::string& given, const std::vector<std::string>& names);

// The preset-naming flags a command was given ("" where not given or not taken).
struct PresetFlags {
  std::string model{};     // --model: a preset, or a config.json path (or its directory)
  std::string hardware{};  // --hardware: a preset, or a path (containing '/' or ending .json)
  std::string cluster{};   // --cluster: likewise
  std::string profile{};   // --profile: an embedded profile, or a directory
  std::string engine{};    // --engine: sglang | vllm | trtllm
};

// Throws InputError naming the first flag whose value is neither a known name nor a path that exists,
// with the known names and the closest one ("did you mean llama-3.1-70b?").
void check_preset_flags(const PresetFlags& flags);

}  // namespace tokenline::cli
