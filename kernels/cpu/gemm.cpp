// CPU GEMMs: the dense projection out = x w^T and the two per-head MLA absorptions (W_UK into q, W_UV
// into the output). Weights are widened to float one row at a time.
#include <algorithm>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {
namespace {

constexpr int64_t kColsPerTask = 16;  // output columns per parallel task (one widened weight block)

// Row j of w widened to float (with its FP8 block scales).
void load_weight_row(float* dst, const GemmParams& p, int64_t j) {
  const int64_t scale_cols = (p.k + kWeightScaleBlock - 1) / kWeightScaleBlock;
  for (int64_t c = 0; c < p.k; ++c) {
    float v = load_float(p.w, p.w_dtype, j * p.k + c);
    if (p.w_scale != nullptr) v *= p.w_scale[(j / kWeightScaleBlock) * scale_cols + c / kWeightScaleBlock];
    dst[c] = v;
  }
}

// x . w with kLanes independent partial sums in a fixed order: deterministic, and the compiler can
// vectorize it (a single running sum cannot be reordered without -ffast-math).
constexpr int64_t kLanes = 8;
float dot(const float* x, const float* w, int64_t k) {
  float lanes[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= k; c += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += x[c + l] * w[c + l];
  }
  float acc = 0.0f;
  for (int64_t l = 0; l < kLanes; ++l) acc += lanes[l];
  for (; c < k; ++c) acc += x[c] * w[c];
  return acc;
}

}  // namespace

void gemm(GemmParams p) {
  const int64_t tasks = (p.n + kColsPerTask - 1) / kColsPerTask;
  parallel_for(tasks, 1, [&](int64_t task) {
    const int64_t j0 = task * kColsPerTask, j1 = std::min<int64_t>(p.n, j0 + kColsPerTask);
    std::vector<float> w(static_cast<size_t>((j1 - j0) * p.k));
    for (int64_t j = j0; j < j1; ++j) load_weight_row(w.data() + (j - j0) * p.k, p, j);
    for (int64_t i = 0; i < p.m; ++i) {
      const float* x = p.x + i * p.k;
      for (int64_t j = j0; j < j1; ++j) {
        const float acc = dot(x, w.data() + (j - j0) * p.k, p.k);
        float& o = p.out[i * p.n + j];
        o = p.accumulate ? o + acc : acc;
      }
    }
  });
}

void mla_absorb_q(MlaAbsorbQParams p) {
  const int64_t q_stride = p.nope_dim + p.rope_dim, w_rows = p.nope_dim + p.v_dim;
  parallel_for(static_cast<int64_t>(p.n_tokens) * p.n_heads, 4, [&](int64_t row) {
    const int64_t h = row % p.n_heads;
    const float* q = p.q + row * q_stride;
    std::vector<float> acc(static_cast<size_t>(p.kv_lora), 0.0f);
    for (int64_t d = 0; d < p.nope_dim; ++d) {
      const int64_t w_row = (h * w_rows + d) * p.kv_lora;
      for (int64_t c = 0; c < p.kv_lora; ++c) acc[c] += q[d] * load_float(p.w_kv_b, p.w_dtype, w_row + c);
    }
    std::copy(acc.begin(), acc.end(), p.q_latent + row * p.kv_lora);
  });
}

void mla_absorb_out(MlaAbsorbOutParams p) {
  const int64_t w_rows = p.nope_dim + p.v_dim;
  parallel_for(static_cast<int64_t>(p.n_tokens) * p.n_heads, 4, [&](int64_t row) {
    const int64_t h = row % p.n_heads;
    const float* o = p.o_latent + row * p.kv_lora;
    for (int64_t j = 0; j < p.v_dim; ++j) {
      const int64_t w_row = (h * w_rows + p.nope_dim + j) * p.kv_lora;
      float acc = 0.0f;
      for (int64_t c = 0; c < p.kv_lora; ++c) acc += o[c] * load_float(p.w_kv_b, p.w_dtype, w_row + c);
      p.out[row * p.v_dim + j] = acc;
    }
  });
}

}  // namespace tokenline::cpu
