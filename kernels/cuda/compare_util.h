// Private helpers of the GPU-vs-CPU comparison (backend_compare*.cpp): seeded inputs, error metrics,
// timing, and a scattered page table in host and device memory.
#pragma once

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cuda/backend_compare.h"
#include "kernels/cuda/device_memory.h"
#include "kernels/params.h"
#include "kernels/pcg_draw.h"

namespace tokenline::cuda::compare {

constexpr double kFloatTolerance = 1e-8;  // NMSE bound for fp32 kernels that only reorder sums
constexpr double kExpTolerance = 1e-6;    // NMSE bound where the GPU's expf/rsqrtf enter the result
constexpr double kIdTolerance = 0.0;      // integer outputs must match exactly

template <class T>
using Host = std::vector<T>;

inline Host<float> random_vector(int64_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Pcg32State rng = pcg32_seed(seed, 0);
  Host<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * pcg32_uniform01(rng);
  return v;
}

inline Host<uint16_t> to_bf16(const Host<float>& v) {
  Host<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = float_to_bf16(v[i]);
  return out;
}

inline double nmse(const Host<float>& got, const Host<float>& want) {
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = std::isinf(got[i]) && std::isinf(want[i]) ? 0.0 : got[i] - static_cast<double>(want[i]);
    err += g * g;
    ref += std::isinf(want[i]) ? 0.0 : static_cast<double>(want[i]) * want[i];
  }
  return ref > 0.0 ? err / ref : err;
}

template <class T>
inline double mismatch(const Host<T>& got, const Host<T>& want) {
  int64_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += got[i] != want[i];
  return want.empty() ? 0.0 : static_cast<double>(differ) / static_cast<double>(want.size());
}

inline double time_ms(const std::function<void()>& run, int32_t repeats, bool gpu) {
  const auto start = std::chrono::steady_clock::now();
  for (int32_t i = 0; i < repeats; ++i) run();
  if (gpu) device_synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
         repeats;
}

inline std::string dims_string(std::initializer_list<int64_t> dims) {
  std::string s;
  for (int64_t d : dims) {
    if (!s.empty()) s += 'x';
    s += std::to_string(d);
  }
  return s;
}

// One comparison: CPU once (timed), GPU once (checked), GPU gpu_repeats times (timed).
struct Comparer {
  const CompareDims& d;
  std::vector<OpComparison> results;

  void run(const std::string& op, const std::string& shape, const std::function<void()>& cpu_run,
           const std::function<void()>& gpu_run, const std::function<double()>& error,
           const std::string& metric, double tolerance) {
    OpComparison c{op, shape, metric, 0.0, tolerance, 0.0, 0.0};
    c.cpu_ms = time_ms(cpu_run, 1, false);
    gpu_run();
    device_synchronize();
    c.error = error();
    c.gpu_ms = time_ms(gpu_run, d.gpu_repeats, true);
    results.push_back(c);
  }
};

// Page table where every sequence holds context + 1 tokens (the cached context plus the decode token),
// pages scattered by a stride permutation of the pool.
struct Table {
  Host<int32_t> indptr, indices, last_page_len, seq, pos;  // seq/pos: every cached token
  Host<int32_t> q_seq, q_pos;                              // the decode tokens
  int32_t pages = 0;
  DeviceArray<int32_t> d_indptr, d_indices, d_last, d_seq, d_pos, d_q_seq, d_q_pos;

  explicit Table(const CompareDims& d) {
    const int32_t len = d.context + 1, per_seq = (len + d.page_size - 1) / d.page_size;
    pages = per_seq * d.tokens;
    int32_t stride = 7;  // a stride coprime with the pool size permutes it
    while (std::gcd(stride, pages) != 1) stride += 2;
    indptr.push_back(0);
    for (int32_t b = 0; b < d.tokens; ++b) {
      for (int32_t i = 0; i < per_seq; ++i)
        indices.push_back(static_cast<int32_t>((static_cast<int64_t>(b * per_seq + i) * stride) % pages));
      indptr.push_back(static_cast<int32_t>(indices.size()));
      last_page_len.push_back(len - (per_seq - 1) * d.page_size);
      for (int32_t p = 0; p < len; ++p) seq.push_back(b), pos.push_back(p);
      q_seq.push_back(b), q_pos.push_back(d.context);
    }
    d_indptr = DeviceArray<int32_t>(indptr), d_indices = DeviceArray<int32_t>(indices);
    d_last = DeviceArray<int32_t>(last_page_len), d_seq = DeviceArray<int32_t>(seq),
    d_pos = DeviceArray<int32_t>(pos);
    d_q_seq = DeviceArray<int32_t>(q_seq), d_q_pos = DeviceArray<int32_t>(q_pos);
  }
  PagedKvTable host(int32_t page_size) const {
    return {page_size, static_cast<int32_t>(last_page_len.size()), indptr.data(), indices.data(),
            last_page_len.data()};
  }
  PagedKvTable device(int32_t page_size) const {
    return {page_size, static_cast<int32_t>(last_page_len.size()), d_indptr.get(), d_indices.get(),
            d_last.get()};
  }
};

void compare_dense_ops(Comparer& c);
void compare_attention_ops(Comparer& c, const Table& table);
void compare_moe_ops(Comparer& c);
void compare_sampling(Comparer& c);

}  // namespace tokenline::cuda::compare
