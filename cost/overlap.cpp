#include "cost/overlap.h"

#include "common/input_error.h"

namespace tokenline {

std::string_view to_string(Overlap overlap) {
  switch (overlap) {
    case Overlap::kNone:
      return "none";
    case Overlap::kCombine:
      return "combine";
    case Overlap::kTwoBatch:
      return "tbo";
    case Overlap::kDpGather:
      return "dp-gather";
  }
  return "";
}

Overlap parse_overlap(const std::string& value, const std::string& where) {
  for (Overlap o : {Overlap::kNone, Overlap::kCombine, Overlap::kTwoBatch, Overlap::kDpGather}) {
    if (value == to_string(o)) return o;
  }
  throw InputError(where, "none, combine, tbo or dp-gather", "'" + value + "'");
}

}  // namespace tokenline
