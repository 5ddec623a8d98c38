#include "workloads/json_fields.h"

#include <cmath>

#include "common/input_limits.h"
#include "common/json_depth.h"
#include "common/number_text.h"

namespace tokenline::jsonl {
namespace {

using nlohmann::json;

const json* find(const json& obj, std::string_view key) {
  auto it = obj.find(std::string(key));
  return it == obj.end() ? nullptr : &*it;
}

int64_t as_int(const json& v, std::string_view key, int64_t min) {
  const std::string expected = "an integer >= " + std::to_string(min);
  if (!v.is_number_integer()) throw FieldError{std::string(key), expected, describe(v)};
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw FieldError{std::string(key), expected, describe(v)};
  const int64_t x = v.get<int64_t>();
  if (x < min) throw FieldError{std::string(key), expected, describe(v)};
  return x;
}

}  // namespace

json parse_object(const std::string& line) {
  constexpr int kMaxDepth = limits::kMaxJsonDepth;
  if (json_nesting_depth(line, kMaxDepth) > kMaxDepth)
    throw FieldError{"", "JSON nested at most " + std::to_string(kMaxDepth) + " levels deep",
                     "deeper nesting"};
  json obj = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) {
    constexpr size_t kMaxShown = 60;  // keep messages one line long
    throw FieldError{"", "a JSON object",
                     "'" + (line.size() > kMaxShown ? line.substr(0, kMaxShown) + "..." : line) + "'"};
  }
  if (!obj.is_object()) throw FieldError{"", "a JSON object", describe(obj)};
  return obj;
}

std::string describe(const json& value) {
  std::string text = value.dump();
  constexpr size_t kMaxShown = 60;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return std::string(value.type_name()) + " " + text;
}

int64_t int_field(const json& obj, std::string_view key, int64_t min) {
  const json* v = find(obj, key);
  if (v == nullptr)
    throw FieldError{std::string(key), "an integer >= " + std::to_string(min), "no such field"};
  return as_int(*v, key, min);
}

std::optional<int64_t> optional_int_field(const json& obj, std::string_view key, int64_t min) {
  const json* v = find(obj, key);
  if (v == nullptr) return std::nullopt;
  return as_int(*v, key, min);
}

double number_field(const json& obj, std::string_view key, double min) {
  const std::string expected = "a number >= " + number_text(min);
  const json* v = find(obj, key);
  if (v == nullptr) throw FieldError{std::string(key), expected, "no such field"};
  if (!v->is_number()) throw FieldError{std::string(key), expected, describe(*v)};
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min) throw FieldError{std::string(key), expected, describe(*v)};
  return x;
}

std::optional<std::vector<int64_t>> optional_int_array(const json& obj, std::string_view key) {
  const json* v = find(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) throw FieldError{std::string(key), "an array of integers", describe(*v)};
  std::vector<int64_t> out;
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!item.is_number_integer())
      throw FieldError{std::string(key) + "[" + std::to_string(i) + "]", "an integer", describe(item)};
    out.push_back(item.get<int64_t>());
  }
  return out;
}

void check_block_count(size_t hash_count, int64_t input_tokens, int64_t block_tokens, std::string_view key) {
  const int64_t want = (input_tokens + block_tokens - 1) / block_tokens;
  if (static_cast<int64_t>(hash_count) == want) return;
  throw FieldError{std::string(key),
                   "ceil(" + std::to_string(input_tokens) + " / " + std::to_string(block_tokens) +
                       ") = " + std::to_string(want) + " block hashes",
                   std::to_string(hash_count)};
}

void reject_unknown_keys(const json& obj, std::initializer_list<std::string_view> allowed) {
  for (const auto& item : obj.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || item.key() == a;
    if (known) continue;
    std::string names;
    for (std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
    throw FieldError{item.key(), "one of the fields {" + names + "}", "unknown field '" + item.key() + "'"};
  }
}

}  // namespace tokenline::jsonl
