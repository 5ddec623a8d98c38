// MooncakeReader: Mooncake FAST'25 trace JSONL, one request per line:
//   {"timestamp": <ms since trace start>, "input_length": N, "output_length": M, "hash_ids": [..]}
// hash_ids name 512-token prompt blocks and must number ceil(input_length / 512). Unknown keys are
// ignored (a third-party format may grow). Streams: holds one line at a time.
#pragma once

#include <cstdint>

#include "workloads/trace_reader.h"

namespace tokenline {

class MooncakeReader final : public TraceReader {
 public:
  static constexpr int32_t kBlockTokens = 512;  // Mooncake README: hash_ids are per 512-token block
  static constexpr double kSecondsPerTimestampUnit = 1e-3;  // timestamps are milliseconds

  MooncakeReader(LineReader lines, ReaderOptions options);

 private:
  WorkloadRequest parse_line(const std::string& line) override;
};

}  // namespace tokenline
