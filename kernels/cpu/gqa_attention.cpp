// CPU grouped-query attention over a BF16 paged cache: the full-context layers and gpt-oss's sliding-window
// layers (window > 0, whose table holds only the window's pages), with or without sink logits; the page
// writer; and Qwen3.5's sigmoid output gate.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/online_softmax.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {

void gqa_kv_write(GqaKvWriteParams p) {
  const int32_t dim = p.kv_heads * p.head_dim, bytes = gqa_kv_token_bytes(p.kv_heads, p.head_dim);
  parallel_for(p.n_tokens, 64, [&](int64_t t) {
    const int64_t slot = gqa_slot(p.table, p.page_first, p.token_seq[t], p.token_pos[t]);
    if (slot < 0) return;  // out of the window table: no later query reads it
    uint8_t* dst = p.kv_cache + slot * bytes;
    for (int32_t i = 0; i < dim; ++i) {
      const uint16_t k = float_to_bf16(p.k[t * dim + i]), v = float_to_bf16(p.v[t * dim + i]);
      std::memcpy(dst + 2 * i, &k, sizeof k);
      std::memcpy(dst + 2 * (dim + i), &v, sizeof v);
    }
  });
}

// One (token, head) row: single-pass online softmax in double over the row's positions, the sink logit
// (if any) folded in as one more score whose value is zero.
void gqa_attention(GqaAttentionParams p) {
  const int32_t group = p.n_heads / p.kv_heads, dim = p.kv_heads * p.head_dim;
  const int32_t bytes = gqa_kv_token_bytes(p.kv_heads, p.head_dim);
  parallel_for(static_cast<int64_t>(p.n_tokens) * p.n_heads, 1, [&](int64_t row) {
    const int64_t t = row / p.n_heads;
    const int32_t h = static_cast<int32_t>(row % p.n_heads), kvh = h / group;
    const int32_t seq = p.token_seq[t], pos = p.token_pos[t];
    const int32_t first = p.window > 0 ? std::max(0, pos - p.window + 1) : 0;
    const float* q = p.q + row * p.q_head_stride;
    std::vector<double> acc(static_cast<size_t>(p.head_dim), 0.0);
    OnlineSoftmax softmax;
    if (p.sinks != nullptr) softmax = {.max_score = p.sinks[h], .denom = 1.0};  // exp(sink - max), max = sink
    for (int32_t s = first; s <= pos; ++s) {
      const int64_t slot = gqa_slot(p.table, p.page_first, seq, s);
      if (slot < 0) continue;  // REQUIRES says it is there; a missing page reads as no key
      const uint8_t* token = p.kv_cache + slot * bytes;
      double score = 0.0;
      for (int32_t i = 0; i < p.head_dim; ++i) {
        uint16_t b;
        std::memcpy(&b, token + 2 * (kvh * p.head_dim + i), sizeof b);
        score += static_cast<double>(q[i]) * bf16_to_float(b);
      }
      const double w = softmax.add(score * p.softmax_scale, acc);
      for (int32_t i = 0; i < p.head_dim; ++i) {
        uint16_t b;
        std::memcpy(&b, token + 2 * (dim + kvh * p.head_dim + i), sizeof b);
        acc[static_cast<size_t>(i)] += w * bf16_to_float(b);
      }
    }
    float* out = p.out + row * p.head_dim;
    for (int32_t i = 0; i < p.head_dim; ++i)
      out[i] = softmax.denom > 0.0 ? static_cast<float>(acc[static_cast<size_t>(i)] / softmax.denom) : 0.0f;
  });
}

void sigmoid_gate(SigmoidGateParams p) {
  parallel_for(p.n_rows, 64, [&](int64_t r) {
    float* x = p.x + r * p.x_stride;
    const float* g = p.gate + r * p.gate_stride;
    for (int32_t i = 0; i < p.dim; ++i) x[i] *= 1.0f / (1.0f + std::exp(-g[i]));
  });
}

}  // namespace tokenline::cpu
