// CPU MLA attention in latent space over the paged cache (fp8_ds_mla or bf16), dense (causal over the
// whole context) and sparse (over the indexer's top-k positions); plus the paged KV writers.
#include <cmath>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/online_softmax.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {
namespace {

const uint8_t* token_bytes(const MlaAttentionParams& p, int32_t seq, int32_t pos) {
  const int64_t bytes = kv_token_bytes(p.layout, p.kv_lora, p.rope_dim);
  return p.kv_cache + kv_slot(p.table, seq, pos) * bytes;
}

// One (token, head) row over the given positions: single-pass online softmax in double, so each cached
// token is decoded once and no per-row buffer grows with the context.
void attend_row(const MlaAttentionParams& p, int64_t row, const std::vector<int32_t>& positions) {
  const int64_t t = row / p.n_heads;
  const int32_t seq = p.token_seq[t];
  const float* ql = p.q_latent + row * p.kv_lora;
  const float* qr = p.q_rope + row * p.q_rope_stride;
  std::vector<float> latent(static_cast<size_t>(p.kv_lora)), rope(static_cast<size_t>(p.rope_dim));
  std::vector<double> acc(static_cast<size_t>(p.kv_lora), 0.0);
  OnlineSoftmax softmax;
  for (int32_t pos : positions) {
    kv_load_token(latent.data(), rope.data(), token_bytes(p, seq, pos), p.layout, p.kv_lora, p.rope_dim);
    double s = 0.0;
    for (int32_t c = 0; c < p.kv_lora; ++c) s += static_cast<double>(ql[c]) * latent[c];
    for (int32_t c = 0; c < p.rope_dim; ++c) s += static_cast<double>(qr[c]) * rope[c];
    const double w = softmax.add(s * p.softmax_scale, acc);
    for (int32_t c = 0; c < p.kv_lora; ++c) acc[c] += w * latent[c];
  }
  float* out = p.out + row * p.kv_lora;
  for (int32_t c = 0; c < p.kv_lora; ++c)
    out[c] = softmax.denom > 0.0 ? static_cast<float>(acc[c] / softmax.denom) : 0.0f;
}

}  // namespace

void mla_attention_dense(MlaAttentionParams p) {
  parallel_for(static_cast<int64_t>(p.n_tokens) * p.n_heads, 1, [&](int64_t row) {
    const int64_t t = row / p.n_heads;
    std::vector<int32_t> positions(static_cast<size_t>(p.token_pos[t] + 1));
    for (int32_t i = 0; i <= p.token_pos[t]; ++i) positions[static_cast<size_t>(i)] = i;
    attend_row(p, row, positions);
  });
}

void mla_attention_sparse(MlaAttentionParams p) {
  parallel_for(static_cast<int64_t>(p.n_tokens) * p.n_heads, 1, [&](int64_t row) {
    const int64_t t = row / p.n_heads;
    std::vector<int32_t> positions;
    for (int32_t i = 0; i < p.topk; ++i) {
      const int32_t pos = p.topk_indices[t * p.topk + i];
      if (pos >= 0 && pos <= p.token_pos[t]) positions.push_back(pos);
    }
    attend_row(p, row, positions);
  });
}

void kv_write(KvWriteParams p) {
  const int64_t bytes = kv_token_bytes(p.layout, p.kv_lora, p.rope_dim);
  parallel_for(p.n_tokens, 64, [&](int64_t t) {
    uint8_t* dst = p.kv_cache + kv_slot(p.table, p.token_seq[t], p.token_pos[t]) * bytes;
    kv_store_token(dst, p.latent + t * p.row_stride, p.rope + t * p.row_stride, p.layout, p.kv_lora,
                   p.rope_dim);
  });
}

void index_k_write(IndexKWriteParams p) {
  parallel_for(p.n_tokens, 64, [&](int64_t t) {
    uint8_t* dst = p.k_cache + kv_slot(p.table, p.token_seq[t], p.token_pos[t]) * p.head_dim * 2;
    for (int32_t i = 0; i < p.head_dim; ++i) {
      const uint16_t b = float_to_bf16(p.k[t * p.head_dim + i]);
      std::memcpy(dst + 2 * i, &b, sizeof b);
    }
  });
}

}  // namespace tokenline::cpu
