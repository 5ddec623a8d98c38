#include "workloads/mooncake_reader.h"

#include <utility>

#include "workloads/json_fields.h"

namespace tokenline {

MooncakeReader::MooncakeReader(LineReader lines, ReaderOptions options)
    : TraceReader(std::move(lines), options, "mooncake") {}

WorkloadRequest MooncakeReader::parse_line(const std::string& line) {
  const nlohmann::json obj = jsonl::parse_object(line);
  WorkloadRequest r;
  r.arrival_s = static_cast<double>(jsonl::int_field(obj, "timestamp", 0)) * kSecondsPerTimestampUnit;
  r.input_tokens = jsonl::int_field(obj, "input_length", 1);
  r.output_tokens = jsonl::int_field(obj, "output_length", 1);
  if (auto hashes = jsonl::optional_int_array(obj, "hash_ids")) {
    jsonl::check_block_count(hashes->size(), r.input_tokens, kBlockTokens, "hash_ids");
    r.block_hashes = std::move(*hashes);
    r.block_tokens = kBlockTokens;
  }
  return r;
}

}  // namespace tokenline
