// CPU Gated DeltaNet (Qwen3-Next / Qwen3.5 linear attention), token by token: the causal depthwise conv1d
// with its per-request conv state, the gated delta-rule recurrence with its per-request state, and the
// gated RMSNorm of its output. Follows transformers' reference path for Qwen3-Next
// (src/transformers/models/qwen3_next/modeling_qwen3_next.py: torch_causal_conv1d_update,
// torch_recurrent_gated_delta_rule, Qwen3NextRMSNormGated), which fla-org/flash-linear-attention's
// fused_recurrent_gated_delta_rule computes too. A prefill chunk runs the same recurrence as decode
// steps, so a prompt prefilled then decoded and one decoded token by token agree (up to FP32 rounding of
// the same operations in the same order: exactly).
#include <cmath>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {
namespace {

float silu(float x) {
  return x / (1.0f + std::exp(-x));
}

// [begin, end) token ranges of each sequence (its tokens are consecutive).
std::vector<std::pair<int32_t, int32_t>> runs(const int32_t* token_seq, int32_t n) {
  std::vector<std::pair<int32_t, int32_t>> out;
  for (int32_t t = 0; t < n; ++t) {
    if (t == 0 || token_seq[t] != token_seq[t - 1]) out.emplace_back(t, t);
    out.back().second = t + 1;
  }
  return out;
}

}  // namespace

void gdn_conv(GdnConvParams p) {
  const std::vector<std::pair<int32_t, int32_t>> seqs = runs(p.token_seq, p.n_tokens);
  const int32_t k = p.kernel, c_all = p.channels;
  // Channels are independent: each (sequence, channel) walks its tokens in order.
  parallel_for(static_cast<int64_t>(seqs.size()) * c_all, 256, [&](int64_t i) {
    const auto [begin, end] = seqs[static_cast<size_t>(i / c_all)];
    const auto c = static_cast<int32_t>(i % c_all);
    float* state = p.state + p.seq_slot[p.token_seq[begin]] * p.state_stride;  // [K - 1, channels]
    const float* w = p.weight + int64_t{c} * k;
    for (int32_t t = begin; t < end; ++t) {
      const float x = p.x[int64_t{t} * c_all + c];
      float acc = w[k - 1] * x;
      for (int32_t j = 0; j < k - 1; ++j) acc += w[j] * state[int64_t{j} * c_all + c];
      for (int32_t j = 0; j + 1 < k - 1; ++j)
        state[int64_t{j} * c_all + c] = state[int64_t{j + 1} * c_all + c];
      state[int64_t{k - 2} * c_all + c] = x;
      p.out[int64_t{t} * c_all + c] = silu(acc);
    }
  });
}

void gdn_recurrence(GdnRecurrenceParams p) {
  const std::vector<std::pair<int32_t, int32_t>> seqs = runs(p.token_seq, p.n_tokens);
  const int32_t dk = p.key_dim, dv = p.value_dim, group = p.value_heads / p.key_heads;
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  parallel_for(static_cast<int64_t>(seqs.size()) * p.value_heads, 1, [&](int64_t i) {
    const auto [begin, end] = seqs[static_cast<size_t>(i / p.value_heads)];
    const auto h = static_cast<int32_t>(i % p.value_heads), kh = h / group;
    float* s = p.state + p.seq_slot[p.token_seq[begin]] * p.state_stride + p.state_offset +
               int64_t{h} * dk * dv;  // [dk, dv]
    std::vector<float> q(static_cast<size_t>(dk)), k(static_cast<size_t>(dk)), kv(static_cast<size_t>(dv));
    for (int32_t t = begin; t < end; ++t) {
      const float* row = p.qkv + int64_t{t} * p.qkv_stride;
      const float* qs = row + int64_t{kh} * dk;
      const float* ks = row + int64_t{p.key_heads} * dk + int64_t{kh} * dk;
      const float* v = row + 2 * int64_t{p.key_heads} * dk + int64_t{h} * dv;
      // l2norm as the FLA reference: x / sqrt(sum x^2 + 1e-6)
      float qn = 0.0f, kn = 0.0f;
      for (int32_t j = 0; j < dk; ++j) {
        qn += qs[j] * qs[j];
        kn += ks[j] * ks[j];
      }
      const float qi = q_scale / std::sqrt(qn + 1e-6f), ki = 1.0f / std::sqrt(kn + 1e-6f);
      for (int32_t j = 0; j < dk; ++j) {
        q[static_cast<size_t>(j)] = qs[j] * qi;
        k[static_cast<size_t>(j)] = ks[j] * ki;
      }
      const float a = p.a[int64_t{t} * p.value_heads + h] + p.dt_bias[h];
      const float softplus = a > 20.0f ? a : std::log1p(std::exp(a));
      const float decay = std::exp(-std::exp(p.a_log[h]) * softplus);
      const float beta = 1.0f / (1.0f + std::exp(-p.b[int64_t{t} * p.value_heads + h]));
      for (int64_t e = 0; e < int64_t{dk} * dv; ++e) s[e] *= decay;
      for (int32_t j = 0; j < dv; ++j) kv[static_cast<size_t>(j)] = 0.0f;
      for (int32_t r = 0; r < dk; ++r)
        for (int32_t j = 0; j < dv; ++j)
          kv[static_cast<size_t>(j)] += s[int64_t{r} * dv + j] * k[static_cast<size_t>(r)];
      for (int32_t j = 0; j < dv; ++j)
        kv[static_cast<size_t>(j)] = (v[j] - kv[static_cast<size_t>(j)]) * beta;
      for (int32_t r = 0; r < dk; ++r)
        for (int32_t j = 0; j < dv; ++j)
          s[int64_t{r} * dv + j] += k[static_cast<size_t>(r)] * kv[static_cast<size_t>(j)];
      float* out = p.out + (int64_t{t} * p.value_heads + h) * dv;
      for (int32_t j = 0; j < dv; ++j) {
        float o = 0.0f;
        for (int32_t r = 0; r < dk; ++r) o += s[int64_t{r} * dv + j] * q[static_cast<size_t>(r)];
        out[j] = o;
      }
    }
  });
}

void gated_rmsnorm(GatedRmsNormParams p) {
  parallel_for(p.n_rows, 64, [&](int64_t r) {
    const float* x = p.x + r * p.dim;
    const float* z = p.z + r * p.dim;
    double ss = 0.0;
    for (int32_t i = 0; i < p.dim; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / p.dim) + p.eps);
    float* out = p.out + r * p.dim;
    for (int32_t i = 0; i < p.dim; ++i) out[i] = x[i] * inv * p.weight[i] * silu(z[i]);
  });
}

}  // namespace tokenline::cpu
