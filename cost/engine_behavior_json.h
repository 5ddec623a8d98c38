// The "engine" object of a profile.json (topologies/profiles/<name>/profile.json) -> EngineBehavior.
// Reads only "engine"; every other key of the file belongs to the profile loader. Each field is a bare
// value or {"value": v, "source": "..."}; "auto" leaves a derived field to resolve_engine(). "name"
// picks the base behaviour (sglang | vllm | seed) that absent fields keep. Unknown fields, wrong types and
// out-of-range values throw InputError naming `where`, the field, what was expected and what was found.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "cost/engine_behavior.h"

namespace tokenline {

// From the already-parsed "engine" object.
EngineBehavior engine_behavior_from_json(const nlohmann::json& engine, const std::string& where);

// From a whole profile.json's text (parse errors and a missing "engine" object throw InputError).
EngineBehavior parse_engine_behavior(std::string_view profile_json_text, const std::string& where);

}  // namespace tokenline
