// AzureReader: Azure LLM inference trace CSV (AzurePublicDataset, 2023):
//   TIMESTAMP,ContextTokens,GeneratedTokens
//   2023-11-16 18:15:46.6805900,374,44
// TIMESTAMP is wall clock "YYYY-MM-DD HH:MM:SS[.fraction]" (up to 9 fractional digits, no zone);
// arrival_s is the offset from the first data row. CRLF or LF, last line with or without a newline.
// No block hashes, sessions or priorities. Streams one line at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "workloads/trace_reader.h"

namespace tokenline {

class AzureReader final : public TraceReader {
 public:
  static constexpr std::string_view kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";

  AzureReader(LineReader lines, ReaderOptions options);

 private:
  void read_header(LineReader& lines) override;
  WorkloadRequest parse_line(const std::string& line) override;

  std::optional<int64_t> first_ns_;  // timestamp of the first data row, nanoseconds since 1970 (no zone)
};

// "YYYY-MM-DD HH:MM:SS[.f...]" -> nanoseconds since 1970-01-01 00:00:00 in the same (unknown) zone;
// nullopt if malformed or outside 1970 .. 2262 (int64 nanoseconds). Exposed for tests.
std::optional<int64_t> parse_wall_clock_ns(std::string_view text);

}  // namespace tokenline
