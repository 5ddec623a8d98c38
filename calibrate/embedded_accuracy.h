// calibrate/accuracy.csv, compiled in (private to tl_calibrate; read by accuracy_table.cpp).
#pragma once

#include "common/embedded_text.h"

namespace tokenline {

// The one path "accuracy.csv".
const std::vector<EmbeddedText>& calibrate_embedded_files();

}  // namespace tokenline
