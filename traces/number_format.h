// Locale-independent, deterministic number formatting for every tokenline output file. Doubles are
// written in fixed point with a given number of decimals by integer arithmetic (no printf, no locale),
// so the same value always gives the same bytes on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tokenline {

// Appends `value` rounded half away from zero to `decimals` (0..9) fractional digits, e.g. 1.5 -> "1.500".
// REQUIRES: |value| * 10^decimals < 9.2e18; NaN and infinities are written as 0 (JSON has no literal).
void append_fixed(std::string& out, double value, int decimals);

// Appends a signed integer in decimal.
void append_int(std::string& out, int64_t value);

// The text append_fixed / append_int append, written at `out`; returns its end. REQUIRES kMaxNumberChars
// bytes at out. For writers that build a whole record in one buffer.
inline constexpr int kMaxNumberChars = 32;
char* put_fixed(char* out, double value, int decimals);
char* put_int(char* out, int64_t value);

// True when append_json_string would write `text` between quotes unchanged (no byte needs escaping).
bool json_plain(std::string_view text);

// Appends `text` as a JSON string literal (quotes and escapes included).
void append_json_string(std::string& out, std::string_view text);

}  // namespace tokenline
