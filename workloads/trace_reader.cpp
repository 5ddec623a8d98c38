#include "workloads/trace_reader.h"

#include <utility>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"

namespace tokenline {
namespace {

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t") == std::string::npos;
}

std::string format_seconds(double s) {
  return number_text(s) + " s";
}

// Throws FieldError for a request beyond the input limits (common/input_limits.h).
void check_limits(const WorkloadRequest& r) {
  if (!(r.arrival_s <= limits::kMaxArrivalS))
    throw FieldError{"arrival", "a time <= " + format_seconds(limits::kMaxArrivalS),
                     format_seconds(r.arrival_s)};
  const std::string most = "at most " + std::to_string(limits::kMaxRequestTokens) + " tokens";
  if (r.input_tokens > limits::kMaxRequestTokens)
    throw FieldError{"input tokens", most, std::to_string(r.input_tokens)};
  if (r.output_tokens > limits::kMaxRequestTokens)
    throw FieldError{"output tokens", most, std::to_string(r.output_tokens)};
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
  return options_.skip_bad_lines ? next_skipping() : next_strict();
}

std::optional<WorkloadRequest> TraceReader::parse_next() {
  do {
    if (!lines_.next(line_)) return std::nullopt;
  } while (is_blank(line_) && !lines_.too_long());
  if (lines_.too_long())
    throw FieldError{"", "a line of at most " + std::to_string(lines_.max_line_bytes()) + " bytes",
                     "a longer line"};
  WorkloadRequest r = parse_line(line_);
  check_limits(r);
  return r;
}

std::optional<WorkloadRequest> TraceReader::next_strict() {
  try {
    std::optional<WorkloadRequest> r = parse_next();
    if (r && r->arrival_s < last_arrival_s_) throw out_of_order(r->arrival_s);
    if (r) return accept(std::move(*r));
    return std::nullopt;
  } catch (const FieldError& e) {
    throw InputError(lines_.where() + (e.field.empty() ? "" : ": " + e.field), e.expected, e.found);
  }
}

std::optional<WorkloadRequest> TraceReader::parse_next_skipping() {
  for (;;) {
    try {
      return parse_next();
    } catch (const FieldError& e) {
      skip(lines_.where(), e);
    }
  }
}

// One-line lookahead: a held line is accepted once the next valid line is not earlier than it.
std::optional<WorkloadRequest> TraceReader::next_skipping() {
  for (;;) {
    std::optional<WorkloadRequest> r = parse_next_skipping();
    if (!r) {
      if (!held_) return std::nullopt;
      WorkloadRequest last = std::move(held_->request);
      held_.reset();
      return accept(std::move(last));
    }
    if (r->arrival_s < last_arrival_s_) {
      skip(lines_.where(), out_of_order(r->arrival_s));
      continue;
    }
    Held next{std::move(*r), lines_.where()};
    if (!held_) {
      held_ = std::move(next);
      continue;
    }
    if (next.request.arrival_s < held_->request.arrival_s) {  // the held line jumped ahead: it is the outlier
      skip(held_->where,
           FieldError{"arrival", "a time <= the next request's " + format_seconds(next.request.arrival_s),
                      format_seconds(held_->request.arrival_s)});
      held_ = std::move(next);
      continue;
    }
    WorkloadRequest out = std::move(held_->request);
    held_ = std::move(next);
    return accept(std::move(out));
  }
}

void TraceReader::skip(const std::string& where, const FieldError& e) {
  if (skipped_ == 0)
    first_skip_reason_ =
        InputError(where + (e.field.empty() ? "" : ": " + e.field), e.expected, e.found).what();
  ++skipped_;
}

FieldError TraceReader::out_of_order(double arrival_s) const {
  return FieldError{"arrival", "a time >= the previous request's " + format_seconds(last_arrival_s_),
                    format_seconds(arrival_s)};
}

WorkloadRequest TraceReader::accept(WorkloadRequest r) {
  last_arrival_s_ = r.arrival_s;
  r.id = next_id_++;
  return r;
}

}  // namespace tokenline
