#include "common/json_depth.h"

#include "common/input_error.h"
#include "common/input_limits.h"

namespace tokenline {

int json_nesting_depth(std::string_view text, int stop_above) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > stop_above) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

void require_json_depth(std::string_view text, const std::string& where) {
  constexpr int kMax = limits::kMaxJsonDepth;
  if (json_nesting_depth(text, kMax) > kMax)
    throw InputError(where, "JSON nested at most " + std::to_string(kMax) + " levels deep", "deeper nesting");
}

}  // namespace tokenline
