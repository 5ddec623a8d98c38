#include "workloads/tokenline_reader.h"

#include <charconv>
#include <limits>
#include <utility>

#include "workloads/json_fields.h"

namespace tokenline {

TokenlineReader::TokenlineReader(LineReader lines, ReaderOptions options)
    : TraceReader(std::move(lines), options, "tokenline") {}

WorkloadRequest TokenlineReader::parse_line(const std::string& line) {
  const nlohmann::json obj = jsonl::parse_object(line);
  jsonl::reject_unknown_keys(
      obj, {"arrival_s", "input_tokens", "output_tokens", "hash_ids", "block_tokens", "priority", "session"});
  WorkloadRequest r;
  r.arrival_s = jsonl::number_field(obj, "arrival_s", 0);
  r.input_tokens = jsonl::int_field(obj, "input_tokens", 1);
  r.output_tokens = jsonl::int_field(obj, "output_tokens", 1);
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  const int64_t block_tokens =
      jsonl::optional_int_field(obj, "block_tokens", 1).value_or(kDefaultBlockTokens);
  if (block_tokens > kInt32Max)
    throw FieldError{"block_tokens", "an integer <= 2^31 - 1", std::to_string(block_tokens)};
  if (auto hashes = jsonl::optional_int_array(obj, "hash_ids")) {
    jsonl::check_block_count(hashes->size(), r.input_tokens, block_tokens, "hash_ids");
    r.block_hashes = std::move(*hashes);
    r.block_tokens = static_cast<int32_t>(block_tokens);
  }
  if (auto priority = jsonl::optional_int_field(obj, "priority", -kInt32Max)) {
    if (*priority > kInt32Max)
      throw FieldError{"priority", "an integer <= 2^31 - 1", std::to_string(*priority)};
    r.priority = static_cast<int32_t>(*priority);
  }
  r.session = jsonl::optional_int_field(obj, "session", 0).value_or(-1);
  return r;
}

std::string to_tokenline_line(const WorkloadRequest& request) {
  char arrival[32];  // shortest text that reads back to the same double, independent of the locale
  const auto end = std::to_chars(arrival, arrival + sizeof arrival, request.arrival_s).ptr;
  std::string out = "{\"arrival_s\": " + std::string(arrival, end) +
                    ", \"input_tokens\": " + std::to_string(request.input_tokens) +
                    ", \"output_tokens\": " + std::to_string(request.output_tokens);
  if (!request.block_hashes.empty()) {
    out += ", \"hash_ids\": [";
    for (size_t i = 0; i < request.block_hashes.size(); ++i)
      out += (i == 0 ? "" : ", ") + std::to_string(request.block_hashes[i]);
    out += "], \"block_tokens\": " + std::to_string(request.block_tokens);
  }
  if (request.priority != 0) out += ", \"priority\": " + std::to_string(request.priority);
  if (request.session >= 0) out += ", \"session\": " + std::to_string(request.session);
  return out + "}";
}

}  // namespace tokenline
