// HostKvPool: the bytes of one GPU rank's host KV tier (engine/core/kv_tier.h), in host memory: for every
// cache buffer of the rank (each layer's KV, each full layer's indexer keys: ForwardPass::kv_regions), one
// page's bytes per host slot. Applies the core's TierCopy list for a step: a store copies an HBM page's
// bytes of every region into a slot, a load copies a slot back into an HBM page (through the KernelSet's
// download / upload, so a device KV pool copies over its host link as SGLang HiCache's does). Not
// thread-safe; the model runner applies a step's copies before its ranks run.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/tier_copy.h"
#include "kernels/kernel_set.h"

namespace tokenline {

// One cache buffer of a rank, in its KernelSet's memory: page p is [base + p * page_bytes, + page_bytes).
struct KvRegion {
  uint8_t* base = nullptr;
  int64_t page_bytes = 0;
  int64_t pages = 0;
};

class HostKvPool {
 public:
  // REQUIRES: kernels and the regions' buffers outlive the pool.
  HostKvPool(const KernelSet& kernels, std::vector<KvRegion> regions, int64_t slots);

  int64_t slots() const { return slots_; }
  int64_t bytes_per_slot() const;
  // Makes the copies in order. REQUIRES: every page and slot in range.
  void apply(std::span<const TierCopy> copies);
  // The bytes of slot in region r (tests).
  std::span<const uint8_t> slot_bytes(size_t region, int64_t slot) const;

 private:
  const KernelSet& kernels_;
  std::vector<KvRegion> regions_;
  std::vector<std::vector<uint8_t>> host_;  // per region: [slots * page_bytes]
  int64_t slots_ = 0;
};

}  // namespace tokenline
