#include "traces/output_config.h"

namespace tokenline {

std::string_view to_string(TraceDetail detail) {
  switch (detail) {
    case TraceDetail::kStep:
      return "step";
    case TraceDetail::kOp:
      return "op";
  }
  return "";
}

}  // namespace tokenline
