// Row-wise CUDA kernels: embedding, (residual +) RMSNorm, RoPE, SiLU*up, scale-add, MTP input.
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace tokenline::cuda {
namespace {

__global__ void embedding_kernel(EmbeddingParams p) {
  const long long t = blockIdx.x;
  const long long row = static_cast<long long>(p.token_ids[t]) - p.vocab_begin;
  const bool here = row >= 0 && row < p.vocab_rows;
  for (int i = threadIdx.x; i < p.hidden; i += blockDim.x) {
    p.out[t * p.hidden + i] = here ? load_float(p.table, p.table_dtype, row * p.hidden + i) : 0.0f;
  }
}

// dst = src * rsqrt(mean(src^2) + eps) * weight for one row per block.
__device__ void rmsnorm_row(float* dst, const float* src, const float* weight, int dim, float eps) {
  float sum_sq = 0.0f;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) sum_sq += src[i] * src[i];
  const float inv = rsqrtf(block_sum(sum_sq) / dim + eps);
  for (int i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = src[i] * inv * weight[i];
}

__global__ void rmsnorm_kernel(RmsNormParams p) {
  const long long r = blockIdx.x;
  const float* src = p.x + r * p.in_stride;
  if (p.residual != nullptr) {
    float* res = p.residual + r * p.dim;
    for (int i = threadIdx.x; i < p.dim; i += blockDim.x) res[i] += src[i];
    __syncthreads();
    src = res;
  }
  rmsnorm_row(p.out + r * p.out_stride, src, p.weight, p.dim, p.eps);
}

__global__ void rope_kernel(RopeParams p) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const int half = p.rope_dim / 2;
  if (idx >= static_cast<long long>(p.n_tokens) * p.n_heads * half) return;
  const int i = static_cast<int>(idx % half);
  const long long row = idx / half, t = row / p.n_heads;
  float* x = p.x + row * p.head_stride + p.rope_offset;
  const double angle = static_cast<double>(p.positions[t]) * rope_inv_freq(p, i);
  const float c = static_cast<float>(cos(angle)), s = static_cast<float>(sin(angle));
  const float a = x[2 * i], b = x[2 * i + 1];
  x[2 * i] = a * c - b * s;
  x[2 * i + 1] = a * s + b * c;
}

__global__ void layernorm_kernel(LayerNormParams p) {
  const long long r = blockIdx.x;
  const float* x = p.x + r * p.dim;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < p.dim; i += blockDim.x) sum += x[i];
  const float mean = block_sum(sum) / p.dim;
  float sum_sq = 0.0f;
  for (int i = threadIdx.x; i < p.dim; i += blockDim.x) sum_sq += (x[i] - mean) * (x[i] - mean);
  const float inv = rsqrtf(block_sum(sum_sq) / p.dim + p.eps);
  for (int i = threadIdx.x; i < p.dim; i += blockDim.x) {
    p.out[r * p.dim + i] = (x[i] - mean) * inv * p.weight[i] + (p.bias ? p.bias[i] : 0.0f);
  }
}

__global__ void silu_mul_kernel(SiluMulParams p) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<long long>(p.n_rows) * p.inter) return;
  const long long r = idx / p.inter, i = idx % p.inter;
  const float gate = p.gate_up[r * 2 * p.inter + i], up = p.gate_up[r * 2 * p.inter + p.inter + i];
  p.out[idx] = gate / (1.0f + expf(-gate)) * up;
}

__global__ void scale_add_kernel(ScaleAddParams p) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= p.n) return;
  p.out[i] = p.out_scale * p.out[i] + (p.x != nullptr ? p.x_scale * p.x[i] : 0.0f);
}

__global__ void mtp_input_kernel(MtpInputParams p) {
  const long long t = blockIdx.x;
  float* dst = p.out + t * 2 * p.hidden;
  rmsnorm_row(dst, p.embedding + t * p.hidden, p.enorm, p.hidden, p.eps);
  rmsnorm_row(dst + p.hidden, p.hidden_states + t * p.hidden, p.hnorm, p.hidden, p.eps);
}

}  // namespace

void embedding(EmbeddingParams p) {
  if (p.n_tokens == 0) return;
  embedding_kernel<<<p.n_tokens, kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void rmsnorm(RmsNormParams p) {
  if (p.n_rows == 0) return;
  rmsnorm_kernel<<<p.n_rows, kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void layernorm(LayerNormParams p) {
  if (p.n_rows == 0) return;
  layernorm_kernel<<<p.n_rows, kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void rope(RopeParams p) {
  const long long n = static_cast<long long>(p.n_tokens) * p.n_heads * (p.rope_dim / 2);
  if (n == 0) return;
  rope_kernel<<<blocks_for(n), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void silu_mul(SiluMulParams p) {
  const long long n = static_cast<long long>(p.n_rows) * p.inter;
  if (n == 0) return;
  silu_mul_kernel<<<blocks_for(n), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void scale_add(ScaleAddParams p) {
  if (p.n == 0) return;
  scale_add_kernel<<<blocks_for(p.n), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void mtp_input(MtpInputParams p) {
  if (p.n_tokens == 0) return;
  mtp_input_kernel<<<p.n_tokens, kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

}  // namespace tokenline::cuda
