// The hardware and cluster JSON files of topologies/, compiled in (private to tl_topologies).
#pragma once

#include "common/embedded_text.h"

namespace tokenline {

// Paths "hardware/<name>.json", "clusters/<name>.json" and "profiles/<name>/<file>" (op profiles, read by
// cost/op_profile.cpp), sorted.
const std::vector<EmbeddedText>& topologies_embedded_specs();

}  // namespace tokenline
