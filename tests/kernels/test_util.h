// Helpers for kernel tests: seeded random tensors (pcg32 + our own uniform) and normalized error
// (llama.cpp test-backend-ops: NMSE = sum (a-b)^2 / sum b^2).
#pragma once

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/numeric.h"
#include "kernels/paged_kv.h"
#include "kernels/pcg_draw.h"

namespace tokenline::test {

// n values uniform in [lo, hi) from pcg32(seed, stream).
inline std::vector<float> random_vector(int64_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f,
                                        uint64_t stream = 0) {
  Pcg32State rng = pcg32_seed(seed, stream);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * pcg32_uniform01(rng);
  return v;
}

inline std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = float_to_bf16(v[i]);
  return out;
}

inline double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    ref += static_cast<double>(want[i]) * want[i];
  }
  return ref > 0.0 ? err / ref : err;
}

// A page table over a pool: sequence b holds lens[b] tokens; page ids are assigned either in order
// (contiguous) or through a fixed permutation of the pool (scattered).
struct PageTableHost {
  std::vector<int32_t> indptr, indices, last_page_len;
  int32_t page_size = 0, num_pages = 0;
  PagedKvTable view() const {
    return PagedKvTable{page_size, static_cast<int32_t>(last_page_len.size()), indptr.data(), indices.data(),
                        last_page_len.data()};
  }
};

inline PageTableHost make_page_table(const std::vector<int32_t>& lens, int32_t page_size, bool scattered,
                                     uint64_t seed = 7) {
  PageTableHost t;
  t.page_size = page_size;
  t.indptr.push_back(0);
  for (int32_t len : lens) {
    const int32_t pages = (len + page_size - 1) / page_size;
    for (int32_t i = 0; i < pages; ++i) t.indices.push_back(t.num_pages++);
    t.indptr.push_back(static_cast<int32_t>(t.indices.size()));
    t.last_page_len.push_back(len - (pages - 1) * page_size);
  }
  if (scattered) {  // Fisher-Yates with our own bounded draw
    Pcg32State rng = pcg32_seed(seed, 1);
    std::vector<int32_t> perm(static_cast<size_t>(t.num_pages));
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[pcg32_next(rng) % i]);
    for (auto& page : t.indices) page = perm[static_cast<size_t>(page)];
  }
  return t;
}

}  // namespace tokenline::test
