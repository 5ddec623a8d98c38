#include "engine/runtime/rank_weights.h"

#include <cassert>

namespace tokenline {

ShardDims shard_dims(const ModelShape& s, const RankShard& shard) {
  const int32_t tp = shard.tp, t = shard.tp_rank;
  assert(s.heads % tp == 0 && s.dense_inter % tp == 0 && s.vocab % tp == 0);
  ShardDims d;
  d.heads = s.heads / tp;
  d.dense_inter = s.dense_inter / tp;
  d.shared_inter = s.moe_inter * s.shared_experts / tp;
  d.vocab_rows = s.vocab / tp;
  d.vocab_begin = t * d.vocab_rows;
  if (shard.ep > 1) {
    assert(s.experts % shard.ep == 0);
    d.local_experts = s.experts / shard.ep;
    d.expert_begin = shard.ep_rank * d.local_experts;
    d.moe_inter = s.moe_inter;
  } else {
    assert(s.moe_inter % tp == 0);
    d.local_experts = s.experts;
    d.moe_inter = s.moe_inter / tp;
  }
  return d;
}

RankWeights::RankWeights(const ModelShape& s, const ModelWeights& w, const RankShard& shard,
                         const KernelSet& kernels)
    : kernels_(kernels), dims_(shard_dims(s, shard)) {
  const ShardDims& d = dims_;
  const int64_t h = s.hidden, qk = s.nope + s.rope, t = shard.tp_rank;
  embed_ = put_all(w.embed(), int64_t{s.vocab} * h);
  final_norm_ = put_all(w.final_norm(), h);
  lm_head_ = put(w.lm_head(), h, d.vocab_begin, d.vocab_rows, 0, h);
  const MtpWeights& mtp = w.mtp();
  mtp_ = MtpWeights{put_all(mtp.eh_proj, 2 * h * h), put_all(mtp.enorm, h), put_all(mtp.hnorm, h),
                    put_all(mtp.head_norm, h)};
  for (int32_t l = 0; l < s.layers + s.mtp_layers; ++l) {
    const LayerWeights& src = w.layer(l);
    LayerWeights& dst = layers_.emplace_back(LayerWeights{});
    dst.attn_norm = put_all(src.attn_norm, h);
    dst.ffn_norm = put_all(src.ffn_norm, h);
    dst.q_a = put_all(src.q_a, int64_t{s.q_lora} * h);
    dst.q_a_norm = put_all(src.q_a_norm, s.q_lora);
    dst.q_b = put(src.q_b, s.q_lora, t * d.heads * qk, d.heads * qk, 0, s.q_lora);
    dst.kv_a = put_all(src.kv_a, int64_t{s.kv_lora + s.rope} * h);
    dst.kv_norm = put_all(src.kv_norm, s.kv_lora);
    const int64_t kv_b_rows = s.nope + s.v;
    dst.kv_b = put(src.kv_b, s.kv_lora, t * d.heads * kv_b_rows, d.heads * kv_b_rows, 0, s.kv_lora);
    dst.o = put(src.o, int64_t{s.heads} * s.v, 0, h, t * d.heads * s.v, d.heads * s.v);
    dst.idx_q = put_all(src.idx_q, int64_t{s.idx_heads} * s.idx_dim * s.q_lora);
    dst.idx_k = put_all(src.idx_k, int64_t{s.idx_dim} * h);
    dst.idx_k_norm = put_all(src.idx_k_norm, s.idx_dim);
    dst.idx_k_norm_bias = put_all(src.idx_k_norm_bias, s.idx_dim);
    dst.idx_w = put_all(src.idx_w, int64_t{s.idx_heads} * h);
    dst.dense_gate_up = put_gate_up(src.dense_gate_up, s.dense_inter, h, t * d.dense_inter, d.dense_inter);
    dst.dense_down = put(src.dense_down, s.dense_inter, 0, h, t * d.dense_inter, d.dense_inter);
    dst.gate = put_all(src.gate, int64_t{s.experts} * h);
    dst.gate_bias = put_all(src.gate_bias, s.experts);
    const int64_t inter0 = shard.ep > 1 ? 0 : t * d.moe_inter;
    const int64_t e0 = d.expert_begin, ne = d.local_experts;
    dst.experts_gate_up = src.experts_gate_up == nullptr
                              ? nullptr
                              : put_gate_up(src.experts_gate_up + e0 * 2 * s.moe_inter * h, s.moe_inter, h,
                                            inter0, d.moe_inter, ne);
    dst.experts_down = put(src.experts_down == nullptr ? nullptr : src.experts_down + e0 * h * s.moe_inter,
                           s.moe_inter, 0, h, inter0, d.moe_inter, ne, h);
    const int64_t shared = int64_t{s.moe_inter} * s.shared_experts;
    dst.shared_gate_up = put_gate_up(src.shared_gate_up, shared, h, t * d.shared_inter, d.shared_inter);
    dst.shared_down = put(src.shared_down, shared, 0, h, t * d.shared_inter, d.shared_inter);
    // GQA and Gated DeltaNet tensors: one rank holds them whole (runner_layout_error: tp 1 for these).
    const LayerWeights* g = &src;
    auto whole = [&](const float* p, int64_t n) { return put_all(p, n); };
    const int64_t hd = s.head_dim, q_rows = int64_t{s.heads} * hd * (s.attn_output_gate ? 2 : 1);
    dst.q_proj = whole(g->q_proj, q_rows * h);
    dst.k_proj = whole(g->k_proj, int64_t{s.kv_heads} * hd * h);
    dst.v_proj = whole(g->v_proj, int64_t{s.kv_heads} * hd * h);
    if (s.gqa) dst.o = whole(src.o, h * s.heads * hd);
    dst.q_norm = whole(g->q_norm, hd);
    dst.k_norm = whole(g->k_norm, hd);
    dst.sinks = whole(g->sinks, s.heads);
    const GdnDims& gd = s.gdn;
    const int64_t v_dim = int64_t{gd.value_heads} * gd.value_dim;
    dst.gdn_qkv = whole(g->gdn_qkv, gd.conv_channels() * h);
    dst.gdn_z = whole(g->gdn_z, v_dim * h);
    dst.gdn_b = whole(g->gdn_b, int64_t{gd.value_heads} * h);
    dst.gdn_a = whole(g->gdn_a, int64_t{gd.value_heads} * h);
    dst.gdn_conv = whole(g->gdn_conv, int64_t{gd.conv_channels()} * gd.conv_kernel);
    dst.gdn_a_log = whole(g->gdn_a_log, gd.value_heads);
    dst.gdn_dt_bias = whole(g->gdn_dt_bias, gd.value_heads);
    dst.gdn_norm = whole(g->gdn_norm, gd.value_dim);
    dst.gdn_out = whole(g->gdn_out, h * v_dim);
  }
}

const float* RankWeights::put(const float* src, int64_t stride, int64_t row0, int64_t rows, int64_t col0,
                              int64_t cols, int64_t blocks, int64_t block_rows) {
  if (src == nullptr) return nullptr;
  std::vector<float> host;
  host.reserve(static_cast<size_t>(blocks * rows * cols));
  for (int64_t b = 0; b < blocks; ++b) {
    const float* block = src + b * block_rows * stride;
    for (int64_t r = row0; r < row0 + rows; ++r) {
      const float* row = block + r * stride + col0;
      host.insert(host.end(), row, row + cols);
    }
  }
  return buffers_.emplace_back(kernels_, host).data();
}

const float* RankWeights::put_all(const float* src, int64_t elements) {
  return put(src, elements, 0, 1, 0, elements);
}

const float* RankWeights::put_gate_up(const float* src, int64_t inter, int64_t cols, int64_t inter0,
                                      int64_t n, int64_t blocks) {
  if (src == nullptr) return nullptr;
  std::vector<float> host;
  host.reserve(static_cast<size_t>(blocks * 2 * n * cols));
  for (int64_t b = 0; b < blocks; ++b) {
    const float* block = src + b * 2 * inter * cols;
    for (int64_t half = 0; half < 2; ++half) {  // gate rows, then up rows
      const float* first = block + (half * inter + inter0) * cols;
      host.insert(host.end(), first, first + n * cols);
    }
  }
  return buffers_.emplace_back(kernels_, host).data();
}

}  // namespace tokenline
