// The hardware and cluster JSON files of topologies/, compiled in (private to tl_topologies).
#pragma once

#include "common/embedded_text.h"

namespace tokenline {

// Paths "hardware/<name>.json" and "clusters/<name>.json", sorted.
const std::vector<EmbeddedText>& topologies_embedded_specs();

}  // namespace tokenline
