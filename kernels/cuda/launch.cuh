// Launch helpers shared by the .cu files: error checks, grid sizing, warp/block reductions.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace tokenline::cuda {

// A failed CUDA call is a programmer or environment error here: report where and abort.
#define TL_CUDA_CHECK(expr)                                                     \
  do {                                                                          \
    cudaError_t tl_err_ = (expr);                                               \
    if (tl_err_ != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(tl_err_));                                \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

#define TL_CUDA_LAUNCHED() TL_CUDA_CHECK(cudaGetLastError())

constexpr int kThreads = 256;  // default block size for elementwise kernels
constexpr int kWarp = 32;      // threads per warp on every NVIDIA GPU

inline unsigned blocks_for(long long n, int threads = kThreads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

__device__ inline float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the block; every thread gets the result. REQUIRES: blockDim.x multiple of 32, <= 1024.
__device__ inline float block_sum(float v) {
  __shared__ float partial[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / kWarp;
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += partial[w];  // fixed order: deterministic
  return total;
}

}  // namespace tokenline::cuda
