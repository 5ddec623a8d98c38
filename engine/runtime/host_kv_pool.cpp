#include "engine/runtime/host_kv_pool.h"

#include <cassert>

namespace tokenline {

HostKvPool::HostKvPool(const KernelSet& kernels, std::vector<KvRegion> regions, int64_t slots)
    : kernels_(kernels), regions_(std::move(regions)), slots_(slots) {
  host_.reserve(regions_.size());
  for (const KvRegion& r : regions_)
    host_.emplace_back(static_cast<size_t>(slots * r.page_bytes), uint8_t{0});
}

int64_t HostKvPool::bytes_per_slot() const {
  int64_t n = 0;
  for (const KvRegion& r : regions_) n += r.page_bytes;
  return n;
}

void HostKvPool::apply(std::span<const TierCopy> copies) {
  for (const TierCopy& c : copies) {
    assert(c.host >= 0 && c.host < slots_ && "a host-tier copy outside the host pool");
    for (size_t i = 0; i < regions_.size(); ++i) {
      const KvRegion& r = regions_[i];
      if (r.page_bytes == 0) continue;
      assert(c.hbm >= 0 && c.hbm < r.pages && "a host-tier copy outside the KV pool");
      uint8_t* page = r.base + static_cast<int64_t>(c.hbm) * r.page_bytes;
      uint8_t* slot = host_[i].data() + static_cast<int64_t>(c.host) * r.page_bytes;
      switch (c.kind) {
        case TierCopy::Kind::kStore:
          kernels_.download(slot, page, r.page_bytes);
          break;
        case TierCopy::Kind::kLoad:
          kernels_.upload(page, slot, r.page_bytes);
          break;
      }
    }
  }
}

std::span<const uint8_t> HostKvPool::slot_bytes(size_t region, int64_t slot) const {
  const int64_t n = regions_[region].page_bytes;
  return {host_[region].data() + slot * n, static_cast<size_t>(n)};
}

}  // namespace tokenline
