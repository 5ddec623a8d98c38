// OutputConfig: where and how a run writes its outputs (metrics.json, requests.csv, trace.json), the same
// for the simulation and the real engine. Validated native values; the CLI parses them.
#pragma once

#include <string>
#include <string_view>

namespace tokenline {

enum class TraceDetail { kStep, kOp };
std::string_view to_string(TraceDetail detail);

struct OutputConfig {
  std::string dir;  // --out; every file is written here
  TraceDetail trace_detail = TraceDetail::kStep;
  bool progress = false;              // a progress bar on stderr (the CLI sets it when stderr is a terminal)
  bool wall_time_in_metrics = false;  // opt-in: the one nondeterministic field
};

}  // namespace tokenline
