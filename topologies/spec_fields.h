// SpecFields: validated reads from a topology JSON document (private to tl_topologies; the only header
// here that names nlohmann). Every failure throws InputError naming the file and the dotted field path.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tokenline::spec {

// Where a value sits: the file (as the user named it) and the dotted field path inside it.
struct Where {
  std::string file;
  std::string field;  // "" for the document root
  Where child(std::string_view key) const;
  std::string text() const;  // "file: field" or "file"
};

// Parses `text`; malformed JSON or a non-object root throws InputError(file, ...).
nlohmann::json parse_document(std::string_view text, const std::string& file);

// Throws if `obj` has a key outside `allowed` (catches typos such as "bw_per_directoin").
void reject_unknown_keys(const nlohmann::json& obj, std::initializer_list<std::string_view> allowed,
                         const Where& where);
const nlohmann::json& require_object(const nlohmann::json& parent, std::string_view key, const Where& where);
std::string require_string(const nlohmann::json& parent, std::string_view key, const Where& where);
// A positive integer stored directly ("nodes": 2).
int64_t require_count(const nlohmann::json& parent, std::string_view key, const Where& where);

// A sourced number: {"value": <finite number >= 0>, "source": "<non-empty>"} (+ "why" when asked).
double sourced_value(const nlohmann::json& parent, std::string_view key, const Where& where);
// As sourced_value, and the object must also carry a non-empty "why".
double sourced_factor(const nlohmann::json& parent, std::string_view key, const Where& where);
// As sourced_value, and the value must be a positive integer.
int64_t sourced_count(const nlohmann::json& parent, std::string_view key, const Where& where);

}  // namespace tokenline::spec
