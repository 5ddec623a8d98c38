// PdLink: the link a PD KV hand-off travels over, and its rate from the hardware description. The prefill
// rank's KV sits on its tp GPUs; each sends its shard over its own NVLink port or NIC in parallel.
#pragma once

#include <string_view>

#include "cost/step_cost.h"

namespace tokenline {

enum class PdLink {
  kNvlink,  // prefill and decode in one NVLink domain: the per-direction NVLink port bandwidth
  kIb200,   // 200 Gb/s InfiniBand per GPU (the seed's IB column)
  kIb400,   // 400 Gb/s NDR InfiniBand per GPU (one ConnectX-7 per GPU on HGX)
};
std::string_view to_string(PdLink link);

struct PdLinkRate {
  double bytes_per_s = 0;  // all sending GPUs together, after the hardware's efficiency factor
  double latency_s = 0;
  double time_s(double bytes) const { return bytes > 0 ? latency_s + bytes / bytes_per_s : 0.0; }
};

// REQUIRES: gpus_sending >= 1. ideal: the seed's figures (no efficiency factors, no latency).
PdLinkRate pd_link_rate(PdLink link, const CostModel& cm, int gpus_sending);

}  // namespace tokenline
