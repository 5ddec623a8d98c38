// TierCopy: one KV page copied between HBM and the host tier (engine/core/kv_tier.h), in the order the core
// decided it. An engine that moves bytes (engine/runtime/host_kv_pool.h) makes a step's copies in this order
// before the step's forward, which reproduces the contents the core assumed: a store reads the HBM page as
// it is when logged, a load writes a page just allocated to the request that loads it.
#pragma once

#include <cstdint>

namespace tokenline {

struct TierCopy {
  enum class Kind { kStore, kLoad };  // store: HBM page -> host slot; load: host slot -> HBM page
  Kind kind = Kind::kStore;
  int32_t hbm = -1;   // page id in the rank's HBM pool (PageId)
  int32_t host = -1;  // slot in the rank's host tier
  bool operator==(const TierCopy&) const = default;
};

}  // namespace tokenline
