#include "cli/slo_option.h"

#include <cmath>
#include <exception>

#include "common/input_error.h"

namespace tokenline {
namespace {

// "200ms", "0.2s" or a bare number of milliseconds.
double parse_duration_s(const std::string& text, const std::string& where) {
  std::string number = text;
  double scale = 1e-3;
  if (text.size() > 2 && text.compare(text.size() - 2, 2, "ms") == 0) {
    number = text.substr(0, text.size() - 2);
  } else if (text.size() > 1 && text.back() == 's') {
    number = text.substr(0, text.size() - 1);
    scale = 1.0;
  }
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != number.size() || number.empty() || !(value > 0) || !std::isfinite(value)) {
    throw InputError(where, "a positive, finite duration such as 200ms or 0.2s", "'" + text + "'");
  }
  return value * scale;
}

}  // namespace

Slo parse_slo(const std::string& text) {
  Slo slo;
  bool seen_ttft = false, seen_tpot = false;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(begin, end - begin);
    const size_t eq = part.find('=');
    const std::string key = part.substr(0, eq);
    if (eq == std::string::npos || (key != "ttft" && key != "tpot")) {
      throw InputError("--slo", "ttft=<duration>,tpot=<duration>", "'" + part + "'");
    }
    bool& seen = key == "ttft" ? seen_ttft : seen_tpot;
    if (seen) throw InputError("--slo " + key, "each key once", "'" + key + "' twice in '" + text + "'");
    seen = true;
    (key == "ttft" ? slo.ttft_s : slo.tpot_s) = parse_duration_s(part.substr(eq + 1), "--slo " + key);
    begin = end + 1;
  }
  return slo;
}

}  // namespace tokenline
