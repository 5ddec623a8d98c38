// PdConfig: prefill/decode disaggregation of a `tokenline sim` run (`--pd 1P1D`). SimConfig::instances
// lists the prefill instances first (role kPrefillOnly), then the decode ones (kDecodeOnly), each with
// its own layout, cost model and KV pool.
#pragma once

#include <cstdint>
#include <string_view>

#include "cost/pd_link.h"
#include "sim/driver/autoscaler.h"

namespace tokenline {

enum class PdTransferMode {
  kWholeRequest,  // the KV leaves after the last chunk, all at once
  // Each layer's KV leaves as it is written, from the first chunk on (or from when the sender's link was
  // last free): only the last layer's share is exposed after the last chunk. The decode pages are still
  // reserved at hand-off, so this is an optimistic bound: it assumes the reservation would have been
  // granted when the prefill started.
  kLayerStream,
};
std::string_view to_string(PdTransferMode mode);

struct PdConfig {
  int32_t prefill_instances = 1;
  int32_t decode_instances = 1;
  PdLink link = PdLink::kIb400;
  PdTransferMode mode = PdTransferMode::kWholeRequest;
  // The profile's pd_handoff_per_token_s (cli/pd_job.cpp apply_pd_path_costs): each hand-off holds its
  // prefill rank's sender this long per prompt token before its KV leaves (transfer descriptors posted one
  // per token and layer with page size 1, serially, as the sender's queue; docs/pd-moe-mtp.md).
  double handoff_per_token_s = 0;
  // Autoscaled pools (--pd-max; docs/autoscaling.md "PD"): prefill_instances and decode_instances are then
  // each pool's slots (its maximum), and each pool has its own policy, as Dynamo's planner scales prefill
  // workers by their queue and decode workers by their KV use. Both off (max_instances 0) or both on.
  AutoscaleConfig prefill_scale;
  AutoscaleConfig decode_scale;
  bool autoscaled() const { return prefill_scale.enabled(); }
  bool enabled() const { return prefill_instances > 0 && decode_instances > 0; }
};

}  // namespace tokenline
