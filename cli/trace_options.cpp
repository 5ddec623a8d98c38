#include "cli/trace_options.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string_view>

#include "common/input_error.h"
#include "common/number_text.h"

namespace tokenline::cli {
namespace {

constexpr const char* kWindowOption = "--trace-window";
constexpr const char* kWindowExpected = "START:END in seconds with 0 <= START < END (END may be empty)";

}  // namespace

void add_trace_options(CLI::App& cmd, TraceOptions& options) {
  cmd.add_option(kWindowOption, options.window,
                 "trace.json keeps the steps and counters of [START, END) seconds and the requests arriving "
                 "in it (e.g. 3600:3660; 3600: to the end)");
  cmd.add_option("--trace-requests", options.requests,
                 "request spans only for the first K requests arriving in the trace window");
  cmd.add_flag("--trace-gzip", options.gzip, "write trace.json.gz (Perfetto opens it) instead of trace.json");
}

TraceWindow parse_trace_window(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) throw InputError(kWindowOption, kWindowExpected, "'" + text + "'");
  const std::string_view all(text);
  const std::optional<double> start = parse_finite_number(all.substr(0, colon));
  const std::string_view end_text = all.substr(colon + 1);
  TraceWindow w;
  const std::optional<double> end =
      end_text.empty() ? std::optional<double>(w.end_s) : parse_finite_number(end_text);
  if (!start || !end || *start < 0 || *end <= *start)
    throw InputError(kWindowOption, kWindowExpected, "'" + text + "'");
  w.start_s = *start;
  w.end_s = *end;
  return w;
}

void apply_trace_options(const TraceOptions& options, OutputConfig& output) {
  if (!options.window.empty()) output.trace_window = parse_trace_window(options.window);
  if (options.requests < -1)
    throw InputError("--trace-requests", "a count >= 0", std::to_string(options.requests));
  output.trace_requests = options.requests;
  output.trace_gzip = options.gzip;
}

}  // namespace tokenline::cli
