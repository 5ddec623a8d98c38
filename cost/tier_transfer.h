// Tier transfer times: KV pages moved between HBM and the host tier (engine/core/kv_tier.h) over the GPU's
// host link (PCIe on HGX parts, NVLink-C2C on Grace parts; hardware JSON "host_link"), in closed form. The
// `simgrid` backend runs the same bytes as a flow on the platform's PCIe link instead, where it contends.
#pragma once

#include <cstdint>
#include <string_view>

namespace tokenline {

// How a load-back overlaps the forward that needs it. kLayer: SGLang HiCache loads layer by layer and each
// layer's attention waits for its own layer only (managers/cache_controller.py LayerDoneCounter; the
// forward's KV buffer access waits on it; v0.5.x, default --hicache-io-backend kernel); kNone: the
// whole load completes before the forward starts (a blocking copy).
enum class TierLoadOverlap { kLayer, kNone };
std::string_view to_string(TierLoadOverlap overlap);

struct HostLinkSpec {
  double bw_per_direction = 0;  // bytes/s, one direction (loads and stores do not share it)
  double latency_s = 0;         // per transfer (a copy's launch and DMA setup)
};

struct TierTime {
  double load_s = 0;   // host -> HBM: the step's load-backs alone on the link
  double store_s = 0;  // HBM -> host writes the step waits for (write_back's blocking eviction)
  double stall_s = 0;  // what the step's duration grows by
};

// bytes over one direction of the link; 0 bytes take no time.
double tier_transfer_s(const HostLinkSpec& link, double bytes);
// The stall a load of load_s adds to a forward of compute_s over `layers` layers. kLayer: a two-stage
// pipeline of equal layer stages (load layer l, then compute it while layer l + 1 loads):
// L x max(a, c) + min(a, c) - L x c with a = load_s / L, c = compute_s / L, which is
// max(load_s / L, load_s - compute_s + compute_s / L). kNone: load_s.
double tier_load_stall_s(double load_s, double compute_s, int32_t layers, TierLoadOverlap overlap);
// The step's tier time: write_back stores first (their freed pages receive the loads), then the loads
// overlapping the forward as `overlap` says.
TierTime price_tier(const HostLinkSpec& link, double load_bytes, double store_bytes, double compute_s,
                    int32_t layers, TierLoadOverlap overlap);

}  // namespace tokenline
