#include "topologies/spec_fields.h"

#include <cmath>
#include <string>

#include "common/input_error.h"
#include "common/json_depth.h"
#include "common/number_text.h"

namespace tokenline::spec {
namespace {

using nlohmann::json;

std::string describe(const json& value) {
  std::string text = value.dump();
  constexpr size_t kMaxShown = 60;  // keep messages one line long
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return std::string(value.type_name()) + " " + text;
}

const json& require_key(const json& parent, std::string_view key, const Where& where) {
  auto it = parent.find(std::string(key));
  if (it == parent.end())
    throw InputError(where.child(key).text(), "a field '" + std::string(key) + "'", "none");
  return *it;
}

// A non-empty string under `key`: "source" says where a number comes from, "why" why a factor is chosen.
void require_text(const json& obj, std::string_view key, const Where& where) {
  auto it = obj.find(std::string(key));
  if (it == obj.end()) throw InputError(where.child(key).text(), "a non-empty string", "none");
  if (!it->is_string() || it->get<std::string>().empty())
    throw InputError(where.child(key).text(), "a non-empty string", describe(*it));
}

double sourced_number(const json& parent, std::string_view key, const Where& where, bool needs_why) {
  const Where at = where.child(key);
  const json& obj = require_key(parent, key, where);
  if (!obj.is_object())
    throw InputError(at.text(), "an object {\"value\": number, \"source\": string}", describe(obj));
  if (needs_why) {
    reject_unknown_keys(obj, {"value", "source", "why"}, at);
    require_text(obj, "why", at);
  } else {
    reject_unknown_keys(obj, {"value", "source"}, at);
  }
  require_text(obj, "source", at);
  const json& value = require_key(obj, "value", at);
  if (!value.is_number()) throw InputError(at.child("value").text(), "a number", describe(value));
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < 0)
    throw InputError(at.child("value").text(), "a finite number >= 0", describe(value));
  return v;
}

}  // namespace

Where Where::child(std::string_view key) const {
  return Where{file, field.empty() ? std::string(key) : field + "." + std::string(key)};
}

std::string Where::text() const {
  return field.empty() ? file : file + ": " + field;
}

json parse_document(std::string_view text, const std::string& file) {
  require_json_depth(text, file);
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw InputError(file, "valid JSON", std::string("a parse error (") + e.what() + ")");
  }
  if (!doc.is_object()) throw InputError(file, "a JSON object at the top level", describe(doc));
  return doc;
}

void reject_unknown_keys(const json& obj, std::initializer_list<std::string_view> allowed,
                         const Where& where) {
  for (const auto& item : obj.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || item.key() == a;
    if (known) continue;
    std::string names;
    for (std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
    throw InputError(where.child(item.key()).text(), "one of the fields {" + names + "}",
                     "unknown field '" + item.key() + "'");
  }
}

const json& require_object(const json& parent, std::string_view key, const Where& where) {
  const json& obj = require_key(parent, key, where);
  if (!obj.is_object()) throw InputError(where.child(key).text(), "an object", describe(obj));
  return obj;
}

std::string require_string(const json& parent, std::string_view key, const Where& where) {
  const json& s = require_key(parent, key, where);
  if (!s.is_string() || s.get<std::string>().empty())
    throw InputError(where.child(key).text(), "a non-empty string", describe(s));
  return s.get<std::string>();
}

int64_t require_count(const json& parent, std::string_view key, const Where& where) {
  const json& n = require_key(parent, key, where);
  if (!n.is_number_integer() || n.get<int64_t>() < 1)
    throw InputError(where.child(key).text(), "an integer >= 1", describe(n));
  return n.get<int64_t>();
}

double sourced_value(const json& parent, std::string_view key, const Where& where) {
  return sourced_number(parent, key, where, false);
}

double sourced_factor(const json& parent, std::string_view key, const Where& where) {
  return sourced_number(parent, key, where, true);
}

int64_t sourced_count(const json& parent, std::string_view key, const Where& where) {
  const double v = sourced_number(parent, key, where, false);
  if (v < 1 || v != std::floor(v))
    throw InputError(where.child(key).child("value").text(), "an integer >= 1", number_text(v));
  return static_cast<int64_t>(v);
}

}  // namespace tokenline::spec
