// CUDA sampling, one block per row, matching the CPU reference's definition (kernels/params.h):
// argmax for greedy rows; otherwise a bitonic sort of (logit desc, id asc) keys gives the top-k/top-p cut,
// and one pcg32 draw walks the candidates in ascending id order.
#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/pcg_draw.h"

namespace tokenline::cuda {
namespace {

constexpr int kSampleThreads = 1024;

// Float -> uint32 preserving order (negative floats reversed).
__device__ inline uint32_t ordered_bits(float f) {
  const uint32_t u = float_bits(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Best (value, lowest index) of a row, for every thread of the block.
__device__ int block_argmax(const float* v, int n) {
  __shared__ float best_v[kSampleThreads];
  __shared__ int best_i[kSampleThreads];
  float bv = -INFINITY;
  int bi = n;  // sentinel larger than any index
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    if (v[i] > bv || (v[i] == bv && i < bi)) bv = v[i], bi = i;
  }
  best_v[threadIdx.x] = bv, best_i[threadIdx.x] = bi;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float ov = best_v[threadIdx.x + stride];
      const int oi = best_i[threadIdx.x + stride];
      if (ov > best_v[threadIdx.x] || (ov == best_v[threadIdx.x] && oi < best_i[threadIdx.x])) {
        best_v[threadIdx.x] = ov, best_i[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  const int result = best_i[0] < n ? best_i[0] : 0;
  __syncthreads();
  return result;
}

__device__ void bitonic_sort(unsigned long long* keys, int n) {
  for (int k = 2; k <= n; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const int partner = i ^ j;
        if (partner <= i) continue;
        const bool ascending = (i & k) == 0;
        const unsigned long long a = keys[i], b = keys[partner];
        if ((a > b) == ascending) keys[i] = b, keys[partner] = a;
      }
      __syncthreads();
    }
  }
}

__global__ void sample_kernel(SampleParams p, unsigned long long* workspace, int padded) {
  const long long r = blockIdx.x;
  const float* logits = p.logits + r * p.vocab;
  const int best = block_argmax(logits, p.vocab);
  const float temperature = p.temperature[r];
  if (temperature <= 0.0f) {
    if (threadIdx.x == 0) p.out[r] = best;
    return;
  }
  const float max_logit = logits[best];
  unsigned long long* keys = workspace + r * padded;
  for (int i = threadIdx.x; i < padded; i += blockDim.x) {
    keys[i] = i < p.vocab ? (static_cast<unsigned long long>(~ordered_bits(logits[i])) << 32) |
                                static_cast<unsigned>(i)
                          : ~0ull;
  }
  __syncthreads();
  bitonic_sort(keys, padded);
  if (threadIdx.x != 0) return;
  // The sequential tail mirrors the CPU reference step by step (double sums, same order).
  auto prob = [&](int i) { return static_cast<double>(expf((logits[i] - max_logit) / temperature)); };
  double total = 0.0;
  for (int i = 0; i < p.vocab; ++i) total += prob(i);
  const int k = p.top_k[r] > 0 ? min(p.top_k[r], p.vocab) : p.vocab;
  double kept = 0.0;
  unsigned long long cut = keys[0];
  for (int j = 0; j < k; ++j) {
    cut = keys[j];
    kept += prob(static_cast<int>(keys[j] & 0xffffffffu));
    if (kept >= p.top_p[r] * total) break;
  }
  Pcg32State rng = pcg32_seed(p.seeds[r], p.steps[r]);
  const double target = pcg32_uniform01(rng) * kept;
  double running = 0.0;
  int last = 0;
  for (int i = 0; i < p.vocab; ++i) {
    const unsigned long long key =
        (static_cast<unsigned long long>(~ordered_bits(logits[i])) << 32) | static_cast<unsigned>(i);
    if (key > cut) continue;
    running += prob(i);
    last = i;
    if (running > target) break;
  }
  p.out[r] = last;
}

}  // namespace

void sample(SampleParams p) {
  if (p.n_rows == 0) return;
  int padded = 1;
  while (padded < p.vocab) padded <<= 1;
  DeviceArray<unsigned long long> workspace(static_cast<long long>(p.n_rows) * padded);
  sample_kernel<<<p.n_rows, kSampleThreads>>>(p, workspace.get(), padded);
  TL_CUDA_LAUNCHED();
  device_synchronize();  // the workspace is freed on return
}

}  // namespace tokenline::cuda
