// The files of workloads/data/ compiled in (private to tl_workloads).
#pragma once

#include "common/embedded_text.h"

namespace tokenline {

// Paths "data/<file>", sorted.
const std::vector<EmbeddedText>& workloads_embedded_data();

}  // namespace tokenline
