// The --slo option of tokenline sim, run and serve: "ttft=2s,tpot=50ms" (either part may be left out;
// bare numbers are milliseconds) -> the goodput Slo of metrics.json. Throws InputError naming --slo.
#pragma once

#include <string>

#include "traces/metrics.h"

namespace tokenline {

Slo parse_slo(const std::string& text);

}  // namespace tokenline
