#include "cost/tier_transfer.h"

#include <algorithm>

namespace tokenline {

std::string_view to_string(TierLoadOverlap overlap) {
  switch (overlap) {
    case TierLoadOverlap::kLayer:
      return "layer";
    case TierLoadOverlap::kNone:
      return "none";
  }
  return "?";
}

double tier_transfer_s(const HostLinkSpec& link, double bytes) {
  if (bytes <= 0 || link.bw_per_direction <= 0) return 0;
  return link.latency_s + bytes / link.bw_per_direction;
}

double tier_load_stall_s(double load_s, double compute_s, int32_t layers, TierLoadOverlap overlap) {
  if (load_s <= 0) return 0;
  switch (overlap) {
    case TierLoadOverlap::kLayer: {
      const double n = static_cast<double>(std::max<int32_t>(layers, 1));
      return std::max(load_s / n, load_s - compute_s + compute_s / n);
    }
    case TierLoadOverlap::kNone:
      return load_s;
  }
  return load_s;
}

TierTime price_tier(const HostLinkSpec& link, double load_bytes, double store_bytes, double compute_s,
                    int32_t layers, TierLoadOverlap overlap) {
  TierTime t;
  t.load_s = tier_transfer_s(link, load_bytes);
  t.store_s = tier_transfer_s(link, store_bytes);
  t.stall_s = t.store_s + tier_load_stall_s(t.load_s, compute_s, layers, overlap);
  return t;
}

}  // namespace tokenline
