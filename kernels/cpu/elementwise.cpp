// Row-wise CPU kernels: embedding lookup, (residual +) RMSNorm, LayerNorm, RoPE, SiLU*up, scale-add, MTP
// input.
#include <cassert>
#include <cmath>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {
namespace {

constexpr int64_t kRowsPerWorker = 16;  // below this many rows a thread costs more than it saves

// dst = src * rsqrt(mean(src^2) + eps) * weight, accumulated in double for a stable reference.
void rmsnorm_row(float* dst, const float* src, const float* weight, int32_t dim, float eps) {
  double sum_sq = 0.0;
  for (int32_t i = 0; i < dim; ++i) sum_sq += static_cast<double>(src[i]) * src[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / dim + eps));
  for (int32_t i = 0; i < dim; ++i) dst[i] = src[i] * inv * weight[i];
}

}  // namespace

void embedding(EmbeddingParams p) {
  parallel_for(p.n_tokens, kRowsPerWorker, [&](int64_t t) {
    float* dst = p.out + t * p.hidden;
    const int64_t row = static_cast<int64_t>(p.token_ids[t]) - p.vocab_begin;
    const bool here = row >= 0 && row < p.vocab_rows;
    for (int32_t i = 0; i < p.hidden; ++i)
      dst[i] = here ? load_float(p.table, p.table_dtype, row * p.hidden + i) : 0.0f;
  });
}

void rmsnorm(RmsNormParams p) {
  parallel_for(p.n_rows, kRowsPerWorker, [&](int64_t r) {
    const float* src = p.x + r * p.in_stride;
    if (p.residual != nullptr) {
      float* res = p.residual + r * p.dim;
      for (int32_t i = 0; i < p.dim; ++i) res[i] += src[i];
      src = res;
    }
    rmsnorm_row(p.out + r * p.out_stride, src, p.weight, p.dim, p.eps);
  });
}

void rope(RopeParams p) {
  assert(p.rope_dim % 2 == 0 && "rope_dim must be even");
  parallel_for(static_cast<int64_t>(p.n_tokens) * p.n_heads, kRowsPerWorker, [&](int64_t row) {
    const int64_t t = row / p.n_heads;
    float* x = p.x + row * p.head_stride + p.rope_offset;
    for (int32_t i = 0; i < p.rope_dim / 2; ++i) {
      const double angle = static_cast<double>(p.positions[t]) * rope_inv_freq(p, i);
      const float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
      const float a = x[2 * i], b = x[2 * i + 1];
      x[2 * i] = a * c - b * s;
      x[2 * i + 1] = a * s + b * c;
    }
  });
}

void layernorm(LayerNormParams p) {
  parallel_for(p.n_rows, kRowsPerWorker, [&](int64_t r) {
    const float* x = p.x + r * p.dim;
    double sum = 0.0, sum_sq = 0.0;
    for (int32_t i = 0; i < p.dim; ++i) sum += x[i];
    const double mean = sum / p.dim;
    for (int32_t i = 0; i < p.dim; ++i) sum_sq += (x[i] - mean) * (x[i] - mean);
    const double inv = 1.0 / std::sqrt(sum_sq / p.dim + p.eps);
    for (int32_t i = 0; i < p.dim; ++i) {
      p.out[r * p.dim + i] =
          static_cast<float>((x[i] - mean) * inv) * p.weight[i] + (p.bias ? p.bias[i] : 0.0f);
    }
  });
}

void scale_add(ScaleAddParams p) {
  if (p.x == nullptr) {
    for (int64_t i = 0; i < p.n; ++i) p.out[i] *= p.out_scale;
    return;
  }
  for (int64_t i = 0; i < p.n; ++i) p.out[i] = p.out_scale * p.out[i] + p.x_scale * p.x[i];
}

void silu_mul(SiluMulParams p) {
  parallel_for(p.n_rows, kRowsPerWorker, [&](int64_t r) {
    const float* gate = p.gate_up + r * 2 * p.inter;
    const float* up = gate + p.inter;
    float* dst = p.out + r * p.inter;
    for (int32_t i = 0; i < p.inter; ++i) dst[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
  });
}

void mtp_input(MtpInputParams p) {
  parallel_for(p.n_tokens, kRowsPerWorker, [&](int64_t t) {
    float* dst = p.out + t * 2 * p.hidden;
    rmsnorm_row(dst, p.embedding + t * p.hidden, p.enorm, p.hidden, p.eps);
    rmsnorm_row(dst + p.hidden, p.hidden_states + t * p.hidden, p.hnorm, p.hidden, p.eps);
  });
}

}  // namespace tokenline::cpu
