// Field reads for one JSON trace line (private to tl_workloads; the only header here that names
// nlohmann). Every failure throws FieldError naming the field, what was expected and what was found.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/trace_reader.h"

namespace tokenline::jsonl {

nlohmann::json parse_object(const std::string& line);
std::string describe(const nlohmann::json& value);  // "string \"abc\"", shortened to one line

// Required integer field >= min.
int64_t int_field(const nlohmann::json& obj, std::string_view key, int64_t min);
std::optional<int64_t> optional_int_field(const nlohmann::json& obj, std::string_view key, int64_t min);
// Required number (integer or float) >= min, finite.
double number_field(const nlohmann::json& obj, std::string_view key, double min);
// Optional array of integers (block hashes).
std::optional<std::vector<int64_t>> optional_int_array(const nlohmann::json& obj, std::string_view key);

// hash_ids must cover the prompt exactly: ceil(input_tokens / block_tokens) ids (Mooncake's invariant).
void check_block_count(size_t hash_count, int64_t input_tokens, int64_t block_tokens, std::string_view key);

// Throws for a key outside `allowed` (tokenline's own format is strict, so typos do not vanish).
void reject_unknown_keys(const nlohmann::json& obj, std::initializer_list<std::string_view> allowed);

}  // namespace tokenline::jsonl
