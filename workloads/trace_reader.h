// TraceReader: the shared loop of line-oriented trace readers (tokenline JSONL, Mooncake JSONL, Azure
// CSV). It reads one line at a time, skips blank lines, numbers requests, enforces non-decreasing
// arrivals, and turns a malformed line into InputError "file:line: field: expected ..., found ..." or,
// with skip_bad_lines, skips and counts it. Lines longer than limits::kMaxLineBytes, arrivals after
// limits::kMaxArrivalS and token counts above limits::kMaxRequestTokens are malformed.
//
// With skip_bad_lines, each line is judged against the lines accepted so far and the one after it, so
// that one outlier is the line skipped, never the good lines around it: a line is held until the next
// valid line arrives; a line earlier than the last accepted one is skipped; a held line later than the
// next line, which itself is not earlier than the last accepted one, is the outlier and is skipped
// (1, 2, 1e9, 3, 4 keeps 1, 2, 3, 4; 1, 2, 0.5, 3 keeps 1, 2, 3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "workloads/line_reader.h"
#include "workloads/workload_source.h"

namespace tokenline {

struct ReaderOptions {
  bool skip_bad_lines = false;  // skip and count malformed lines instead of stopping at the first
};

// Thrown by a reader's parse_line for one bad field; TraceReader adds file and line.
struct FieldError {
  std::string field;  // "input_length"; "" for the line as a whole
  std::string expected;
  std::string found;
};

class TraceReader : public WorkloadSource {
 public:
  std::optional<WorkloadRequest> next() final;
  int64_t skipped_lines() const final { return skipped_; }
  std::string describe() const final { return format_ + ":" + lines_.name(); }
  std::string first_skip_reason() const final { return first_skip_reason_; }

 protected:
  TraceReader(LineReader lines, ReaderOptions options, std::string format);
  // Parses one non-blank data line (everything but `id`). Throws FieldError.
  virtual WorkloadRequest parse_line(const std::string& line) = 0;
  // Consumes header lines before the first data line; the default reads none. Throws InputError.
  virtual void read_header(LineReader& lines);

 private:
  struct Held {
    WorkloadRequest request;
    std::string where;  // "file:line" of the held line
  };

  std::optional<WorkloadRequest> next_strict();
  std::optional<WorkloadRequest> next_skipping();
  // The next well-formed line's request (FieldError for a malformed one); nullopt at the end.
  std::optional<WorkloadRequest> parse_next();
  // parse_next(), skipping and counting malformed lines.
  std::optional<WorkloadRequest> parse_next_skipping();
  void skip(const std::string& where, const FieldError& e);
  FieldError out_of_order(double arrival_s) const;
  WorkloadRequest accept(WorkloadRequest r);

  LineReader lines_;
  ReaderOptions options_;
  std::string format_;
  std::string line_;  // the one line held in memory
  bool header_done_ = false;
  int64_t next_id_ = 0;
  int64_t skipped_ = 0;
  std::string first_skip_reason_;
  double last_arrival_s_ = 0;
  std::optional<Held> held_;  // skip_bad_lines: the line waiting for the next one
};

}  // namespace tokenline
