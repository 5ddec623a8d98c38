// OutputConfig: where and how a run writes its outputs (metrics.json, requests.csv, trace.json), the same
// for the simulation and the real engine. Validated native values; the CLI parses them.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace tokenline {

// none: no trace file; step: step spans per rank, request spans, counters; op: also op spans, idle ranks'
// steps and each step's batch composition (what a replay reads).
enum class TraceDetail { kNone, kStep, kOp };
std::string_view to_string(TraceDetail detail);

// The simulated-time interval [start_s, end_s) whose steps and counters trace.json keeps. Request spans
// belong to the request: those of requests arriving inside the window are written whole, even past end_s.
struct TraceWindow {
  double start_s = 0;
  double end_s = std::numeric_limits<double>::infinity();
  bool contains(double time_s) const { return time_s >= start_s && time_s < end_s; }
  bool whole() const { return start_s <= 0 && end_s == std::numeric_limits<double>::infinity(); }
};

struct OutputConfig {
  std::string dir;  // --out; every file is written here
  TraceDetail trace_detail = TraceDetail::kStep;
  TraceWindow trace_window = {};      // --trace-window START:END
  int64_t trace_requests = -1;        // --trace-requests K: request spans of the first K arrivals in the
                                      // window only; -1: of every request in the window
  bool trace_gzip = false;            // --trace-gzip: trace.json.gz instead of trace.json
  bool progress = false;              // a progress line on stderr (the CLI sets it when stderr is a terminal)
  bool wall_time_in_metrics = false;  // opt-in: the one nondeterministic field
  // metrics.json's "configuration" block: the resolved run as a JSON object's text, written by the command
  // that resolved it (every default filled in, the arguments that reproduce it); "": no block.
  std::string configuration_json = {};
};

// The trace file's name in the output directory: "trace.json", or "trace.json.gz" with gzip.
const char* trace_file_name(const OutputConfig& output);

}  // namespace tokenline
