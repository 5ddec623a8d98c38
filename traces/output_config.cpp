#include "traces/output_config.h"

namespace tokenline {

std::string_view to_string(TraceDetail detail) {
  switch (detail) {
    case TraceDetail::kNone:
      return "none";
    case TraceDetail::kStep:
      return "step";
    case TraceDetail::kOp:
      return "op";
  }
  return "";
}

const char* trace_file_name(const OutputConfig& output) {
  return output.trace_gzip ? "trace.json.gz" : "trace.json";
}

}  // namespace tokenline
