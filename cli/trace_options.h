// The trace.json options shared by the commands that write one (tokenline sim, quickstart, run, serve)
// beside --trace-detail: --trace-window START:END (simulated or run seconds), --trace-requests K and
// --trace-gzip, as given on the command line, then validated into OutputConfig (traces/output_config.h).
#pragma once

#include <cstdint>
#include <string>

#include "traces/output_config.h"

namespace CLI {
class App;
}

namespace tokenline::cli {

struct TraceOptions {
  std::string window;     // "START:END" seconds; "START:" has no end; "": the whole run
  int64_t requests = -1;  // request spans for the first K arrivals in the window; -1: all
  bool gzip = false;      // trace.json.gz
};

void add_trace_options(CLI::App& cmd, TraceOptions& options);

// Throws InputError naming the option: a window that is not START:END with 0 <= START < END, or K < 0.
void apply_trace_options(const TraceOptions& options, OutputConfig& output);

// "START:END" -> the window; throws InputError("--trace-window", ...).
TraceWindow parse_trace_window(const std::string& text);

}  // namespace tokenline::cli
