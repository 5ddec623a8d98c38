// json_depth: the nesting depth of JSON text, measured before parsing so that a document nested deeper
// than limits::kMaxJsonDepth is refused with a message instead of overflowing the stack in a recursive
// walk of the parsed value (nlohmann's dump and copy recurse; its parser does not).
#pragma once

#include <string>
#include <string_view>

namespace tokenline {

// The deepest nesting of [ and { outside strings, counting stops once it exceeds `stop_above`. No
// validation: malformed text is the parser's to report.
int json_nesting_depth(std::string_view text, int stop_above);

// Throws InputError(where, "JSON nested at most N deep", ...) when `text` nests deeper than kMaxJsonDepth.
void require_json_depth(std::string_view text, const std::string& where);

}  // namespace tokenline
