#include "workloads/trace_reader.h"

#include <utility>

#include "common/input_error.h"
#include "common/number_text.h"

namespace tokenline {
namespace {

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t") == std::string::npos;
}

std::string format_seconds(double s) {
  return number_text(s) + " s";
}

}  // namespace

TraceReader::TraceReader(LineReader lines, ReaderOptions options, std::string format)
    : lines_(std::move(lines)), options_(options), format_(std::move(format)) {}

void TraceReader::read_header(LineReader&) {}

std::optional<WorkloadRequest> TraceReader::next() {
  if (!header_done_) {
    read_header(lines_);
    header_done_ = true;
  }
  for (;;) {
    try {
      return next_valid();
    } catch (const FieldError& e) {
      const std::string where = lines_.where() + (e.field.empty() ? "" : ": " + e.field);
      InputError error(where, e.expected, e.found);
      if (!options_.skip_bad_lines) throw error;
      if (skipped_ == 0) first_skip_reason_ = error.what();
      ++skipped_;
    }
  }
}

std::optional<WorkloadRequest> TraceReader::next_valid() {
  do {
    if (!lines_.next(line_)) return std::nullopt;
  } while (is_blank(line_));
  WorkloadRequest r = parse_line(line_);
  if (r.arrival_s < last_arrival_s_)
    throw FieldError{"arrival", "a time >= the previous request's " + format_seconds(last_arrival_s_),
                     format_seconds(r.arrival_s)};
  last_arrival_s_ = r.arrival_s;
  r.id = next_id_++;
  return r;
}

}  // namespace tokenline
