// TokenlineReader: tokenline's own JSONL workload format, one request per line:
//   {"arrival_s": 0.25, "input_tokens": 4096, "output_tokens": 256,          (required)
//    "hash_ids": [..], "block_tokens": 512, "priority": 0, "session": 7}     (optional)
// arrival_s: seconds since the workload start, non-decreasing; tokens >= 1; hash_ids: one id per
// block_tokens-sized prompt block (default block_tokens 512), ceil(input_tokens / block_tokens) of them;
// priority: int32, larger = more urgent; session: >= 0 groups the turns of one conversation.
// Unknown keys are errors (a misspelt field would otherwise vanish). Streams one line at a time.
#pragma once

#include <cstdint>
#include <string>

#include "workloads/trace_reader.h"

namespace tokenline {

class TokenlineReader final : public TraceReader {
 public:
  static constexpr int32_t kDefaultBlockTokens = 512;  // Mooncake's block size, so traces convert 1:1

  TokenlineReader(LineReader lines, ReaderOptions options);

 private:
  WorkloadRequest parse_line(const std::string& line) override;
};

// One request as a tokenline JSONL line (no newline); TokenlineReader reads it back to the same fields.
std::string to_tokenline_line(const WorkloadRequest& request);

}  // namespace tokenline
