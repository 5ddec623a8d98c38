// step_cost: the roofline + alpha-beta cost of one forward step, op by op, on the busiest attention rank.
// Work is first computed per GPU of a rank (sharded ops divide by tp, replicated ops do not), then scaled
// to the rank (x tp) and summed over ranks for the instance. No allocation on this path.
#include "cost/step_cost.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cost/op_profile_pricing.h"
#include "cost/rank_work.h"
#include "engine/model/linear_state.h"

namespace tokenline {
namespace {

constexpr double kActBytes = 2;             // activations in BF16
constexpr double kLogitBytes = 4;           // logits in FP32 (the seed's b x 154880 x 4)
constexpr double kDispatchBytes = 1;        // dispatch sends FP8 hidden states (the seed: "x 1 (FP8)")
constexpr double kCombineBytes = 2;         // combine returns BF16 (the seed: "x 2 (BF16)")
constexpr double kNormFlopsPerElem = 4;     // square, sum, scale, multiply
constexpr double kRopeFlopsPerElem = 5;     // q_a/kv_a RMSNorm (4) + RoPE rotation (~1 per dim on average)
constexpr double kSampleFlopsPerLogit = 5;  // softmax (exp, sum, divide) + top-k/top-p compare
constexpr double kTopkIndexBytes = 4;       // int32 indices written by top-k
constexpr double kSinkFlopsPerHead = 4;     // gpt-oss's sink: one more exp, add to the sum, max, rescale
constexpr double kSinkBytes = 2;            // one BF16 sink logit per head per layer
// A token's q and k variances, FP32 each: vLLM 0.16.0 / 0.18.0 MiniMaxText01RMSNormTP.forward_qk
// (model_executor/layers/mamba/linear_attn.py) all-reduces torch.cat([q_var, k_var]) of [tokens, 2] float32
// once per layer (one call for q and k since vllm-project/vllm#31493; SGLang's minimax_m2 the same, #14416).
constexpr double kQkVarianceBytes = 2 * 4;

// Sum over i in [0, n) of (c + i + 1): causal keys of n new tokens after c cached ones.
double causal_keys(double c, double n) {
  return n * c + n * (n + 1) / 2;
}

// Sum over i in [0, n) of min(c + i + 1, k).
double capped_keys(int64_t c, int64_t n, int64_t k) {
  if (c + n <= k) return causal_keys(double(c), double(n));
  if (c + 1 >= k) return double(n) * double(k);
  const int64_t below = k - c;  // tokens i with c + i + 1 <= k
  return causal_keys(double(c), double(below)) + double(n - below) * double(k);
}

// Keys read when query tiles of q tokens share one pass: sum over tiles of (c + last token of the tile).
double tiled_keys(int64_t c, int64_t n, int64_t q) {
  const int64_t tiles = (n + q - 1) / q;
  return double(tiles) * double(c) + double(q) * double(tiles - 1) * double(tiles) / 2 + double(n);
}

// Sum over positions p in [c, c + n) of (p mod k + 1): the keys of chunked attention (Llama 4's
// attention_chunk_size), where a query sees its own k-token chunk up to itself.
double chunked_keys(int64_t c, int64_t n, int64_t k) {
  auto upto = [k](int64_t x) {  // the sum over p in [0, x)
    const int64_t whole = x / k, rest = x % k;
    return double(whole) * double(k) * double(k + 1) / 2 + double(rest) * double(rest + 1) / 2;
  };
  return upto(c + n) - upto(c);
}

// Sum over x in [1, m] of floor(x / r): the entries compressed r to one that the tokens up to position m
// see. With m = q r + t: r q (q - 1) / 2 + q (t + 1).
double compressed_sum(int64_t m, int64_t r) {
  if (m <= 0) return 0;
  const int64_t q = m / r, t = m % r;
  return double(r) * double(q) * double(q - 1) / 2 + double(q) * double(t + 1);
}

// DeepSeek-V4's compressed keys of one sequence's n tokens after c (docs/layers.md "DeepSeek-V4"): a token at
// position p (1-based) sees floor(p / 4) CSA entries, of which it attends to at most the indexer's top-k, and
// floor(p / 128) HCA entries, all of them. A query tile of q tokens reads the entries its last token sees.
void compressed_work(const CostModel& cm, int64_t c, int64_t n, int64_t q, RankWork& w) {
  const int64_t topk = cm.model.compressed.index_topk, cap = 4 * topk;  // from position 4 topk on: topk
  auto csa = [&](int64_t a, int64_t b) {  // sum over x in (a, b] of min(floor(x / 4), topk)
    auto upto = [&](int64_t m) {
      return compressed_sum(std::min(m, cap - 1), 4) + double(std::max<int64_t>(0, m - (cap - 1))) * topk;
    };
    return upto(b) - upto(a);
  };
  const double csa_keys = csa(c, c + n), hca_keys = compressed_sum(c + n, 128) - compressed_sum(c, 128);
  const double idx_pairs = compressed_sum(c + n, 4) - compressed_sum(c, 4);
  const int64_t tiles = (n + q - 1) / q;
  double idx_read = 0, csa_read = 0, hca_read = 0;
  for (int64_t t = 0; t < tiles && n > 1; ++t) {  // each tile reads what its last token sees
    const int64_t last = c + std::min(n, (t + 1) * q);
    idx_read += double(last / 4);
    csa_read += double(std::min(last / 4, topk * std::min<int64_t>(q, n - t * q)));
    hca_read += double(last / 128);
  }
  w.csa_attn_keys += csa_keys;
  w.csa_kv_read_keys += n == 1 ? csa_keys : std::min(csa_keys, csa_read);
  w.csa_idx_pairs += idx_pairs;
  w.csa_idx_read_keys += n == 1 ? idx_pairs : idx_read;
  w.hca_attn_keys += hca_keys;
  w.hca_kv_read_keys += n == 1 ? hca_keys : std::min(hca_keys, hca_read);
}

// Window layers' keys of one sequence's n tokens after c (sliding: the last W before each query; chunked:
// its chunk). KV read per query tile: a tile of q queries reads at most W + q - 1 keys.
void window_work(const CostModel& cm, int64_t c, int64_t n, int64_t q, bool prefill, RankWork& w) {
  const int64_t W = cm.model.window_tokens;
  const double keys = cm.chunked_window ? chunked_keys(c, n, W) : capped_keys(c, n, W);
  w.win_attn_keys += keys;
  const int64_t tiles = (n + q - 1) / q;
  w.win_kv_read_keys += n == 1 ? keys : std::min(tiled_keys(c, n, q), double(tiles) * double(W + q - 1));
  if (prefill) {
    w.win_prefill_pairs += keys;
  } else {
    const int64_t last = c + n - 1;  // the last token's position
    w.win_decode_keys += cm.chunked_window ? double(last % W + 1) : double(std::min(last + 1, W));
  }
}

// MiniMax-M3's block-sparse layers' sums of one sequence's n tokens after c (docs/layers.md "MiniMax-M3"):
// each query attends to at most K = topk_tokens keys, the blocks it selected (read per query: a tile's
// queries select blocks of their own); the indexer scores every cached key of a query whose context exceeds
// K (vLLM's MiniMaxM3Indexer takes every block below that) and reads the index keys once per query tile.
void block_sparse_work(const CostModel& cm, int64_t c, int64_t n, int64_t q, bool prefill, RankWork& w) {
  const int64_t K = cm.model.block_sparse.topk_tokens();
  const double keys = capped_keys(c, n, K);
  w.bs_attn_keys += keys;
  w.bs_kv_read_keys += keys;
  const int64_t below = std::clamp<int64_t>(K - c, 0, n);  // queries whose context is within K
  w.bs_idx_pairs += causal_keys(double(c), double(n)) - causal_keys(double(c), double(below));
  if (c + n > K) w.bs_idx_read_keys += n == 1 ? double(c + 1) : tiled_keys(c, n, q);
  if (prefill)
    w.bs_prefill_pairs += keys;
  else
    w.bs_decode_keys += double(std::min(c + n, K));
}

}  // namespace

RankWork summarize(const CostModel& cm, std::span<const SeqWork> seqs) {
  RankWork w;
  const ModelConfig& m = cm.model;
  const int64_t q = cm.options.indexer_q_tile_tokens;
  const int64_t topk = m.has_indexer() ? m.indexer_topk : m.max_context_tokens;
  const bool windows = cm.window_layers > 0, block_sparse = cm.block_sparse_layers > 0;
  for (const SeqWork& s : seqs) {
    if (s.new_tokens <= 0) continue;
    const int64_t n = s.new_tokens, c = s.context_tokens;
    if (windows) window_work(cm, c, n, q, s.prefill, w);
    if (block_sparse) block_sparse_work(cm, c, n, q, s.prefill, w);
    if (m.attention == AttentionKind::kCompressed) compressed_work(cm, c, n, q, w);
    if (n == 1 && !s.prefill) {           // a plain decode, most of a run's work: the sums below at n = 1
      const double keys = double(c + 1);  // causal_keys(c, 1) and tiled_keys(c, 1, q)
      const double attended = double(std::min(c + 1, topk));  // capped_keys(c, 1, topk)
      w.tokens += 1;
      w.lm_tokens += 1;
      w.decode_tokens += 1;
      w.decode_seqs += 1;
      w.decode_keys += keys;
      w.attn_keys += attended;
      w.kv_read_keys += m.has_indexer() ? attended : keys;
      if (m.has_indexer()) {
        w.idx_pairs += keys;
        w.idx_read_keys += keys;
      }
      continue;
    }
    w.tokens += double(n);
    w.lm_tokens += s.prefill ? (s.last_chunk ? 1 : 0) : double(n);
    w.decode_tokens += s.prefill ? 0 : double(n);
    if (!s.prefill) w.max_drafts = std::max(w.max_drafts, n - 1);
    if (s.prefill) {
      w.prefill_seqs += 1;
      w.prefill_tokens += double(n);
      w.prefill_pairs += causal_keys(double(c), double(n));
      w.max_prefill_keys = std::max(w.max_prefill_keys, c + n);
    } else {
      w.decode_seqs += 1;
      w.decode_keys += double(c + n);
    }
    w.attn_keys += capped_keys(c, n, topk);
    w.kv_read_keys += m.has_indexer() ? capped_keys(c, n, topk) : tiled_keys(c, n, q);
    if (m.has_indexer()) {
      w.idx_pairs += causal_keys(double(c), double(n));
      w.idx_read_keys += tiled_keys(c, n, q);
    }
  }
  return w;
}

namespace {

// kGemm: the attention projections; the other GEMMs at their weight group's format (CostModel::gemm_rate).
enum class Rate {
  kGemm,
  kDenseGemm,
  kSharedGemm,
  kExpertGemm,
  kRouterGemm,
  kHeadGemm,
  kMtpGemm,
  kAttention,
  kIndexer,
  kVector
};

double rate(const CostModel& cm, Rate r) {
  switch (r) {
    case Rate::kGemm:
      return cm.gemm_flops;
    case Rate::kDenseGemm:
      return cm.gemm_rate(WeightGroup::kDenseMlp);
    case Rate::kSharedGemm:
      return cm.gemm_rate(WeightGroup::kSharedExperts);
    case Rate::kExpertGemm:
      return cm.gemm_rate(WeightGroup::kRoutedExperts);
    case Rate::kRouterGemm:
      return cm.gemm_rate(WeightGroup::kRouter);
    case Rate::kHeadGemm:
      return cm.gemm_rate(WeightGroup::kLmHead);
    case Rate::kMtpGemm:
      return cm.gemm_rate(WeightGroup::kMtp);
    case Rate::kAttention:
      return cm.attention_flops;
    case Rate::kIndexer:
      return cm.indexer_flops;
    case Rate::kVector:
      return cm.vector_flops;
  }
  return cm.vector_flops;
}

// Per-GPU work of one compute op; scaled to the rank by finish_op.
struct GpuWork {
  int layers = 0;
  double flops = 0, weight = 0, kv = 0, idx = 0, act = 0;
  Rate rate = Rate::kVector;
};

void finish_op(const CostModel& cm, Term& t, const GpuWork& g) {
  const double tp = cm.parallel.tp;
  t.layers = g.layers;
  t.count = g.layers;
  t.rank_flops = g.flops * tp;
  t.weight_bytes = g.weight * tp;
  t.kv_bytes = g.kv * tp;
  t.indexer_bytes = g.idx * tp;
  t.rank_hbm_bytes = (g.weight + g.kv + g.idx + g.act) * tp;
  t.compute_s = g.flops / rate(cm, g.rate);
  t.memory_s = (g.weight + g.kv + g.idx + g.act) / cm.hbm_bw;
  t.launch_s = double(t.count) * cm.kernel_launch_s;
  t.time_s = std::max(t.compute_s, t.memory_s) + t.launch_s;
}

void finish_collective(const CostModel& cm, Term& t, int64_t count, double bytes_each) {
  if (count <= 0 || bytes_each <= 0) return;
  t.layers = int(count);
  t.count = count;
  t.bytes_each = bytes_each;
  t.bytes_total = double(count) * bytes_each;
  t.memory_s = t.bytes_total / cm.link_bw;
  t.launch_s = double(count) * cm.collective_launch_s;
  t.time_s = t.memory_s + t.launch_s;
}

using Terms = std::array<Term, kOpCount>;
Term& at(Terms& t, Op op) {
  return t[static_cast<size_t>(op)];
}

void indexer_ops(const CostModel& cm, const RankWork& w, Terms& out);
void block_sparse_indexer_ops(const CostModel& cm, const RankWork& w, Terms& out);

// DeepSeek-V4's block of every layer (docs/layers.md "DeepSeek-V4"): norms and the hyper-connection mixes;
// wq_a and wkv (a_proj); wq_b (q_b_proj); the compressors' GEMMs and the KV writes of the window and the
// compressed entries; on CSA layers the indexer over the compressed keys and its top-k; attention of every
// query head over its window (window_attention) and over the compressed entries it selects (sparse_mla);
// the grouped low-rank output, wo_a (each of o_groups head groups -> o_lora_rank) and wo_b (o_proj). The
// query heads and the o_groups split over TP; the one KV head does not.
void compressed_attention_ops(const CostModel& cm, const RankWork& w, Terms& out) {
  const ModelConfig& m = cm.model;
  const CompressedAttention& a = m.compressed;
  const double T = w.tokens, tp = cm.parallel.tp, bpp = cm.weight_bytes_per_param;
  const double h = double(m.hidden), hd = double(m.head_dim), heads = double(m.heads);
  const double q_lora = double(m.q_lora_rank), hc = double(a.hc_mult);
  const int L = m.layers, Ln = m.block_norms(), Lc = a.layers_of(4), Lh = a.layers_of(128);
  const double kv = double(cm.kv_bytes_token_layer);
  finish_op(cm, at(out, Op::kEmbed),
            {1, 0, T * h * cm.bpp(WeightGroup::kEmbed), 0, 0, T * h * kActBytes, Rate::kVector});
  // Two mixes a layer of the hc copies of the residual: a (2 + hc) x hc map of hc x hidden, read and written.
  const double mix_flops = hc > 1 ? 2 * L * T * 2 * hc * h * (2 + hc) * hc : 0;
  const double mix_bytes = hc > 1 ? 2 * L * T * 2 * hc * h * kActBytes : 0;
  finish_op(cm, at(out, Op::kRmsnorm),
            {Ln, Ln * T * h * kNormFlopsPerElem + mix_flops, 0, 0, 0, Ln * T * 3 * h * kActBytes + mix_bytes,
             Rate::kVector});
  // wq_a and wkv, and each compressed layer's compressor (wkv and wgate, doubled where CSA windows overlap)
  const double w_a = L * h * (q_lora + hd) + (Lc * 2 * 2 + Lh * 2) * h * hd;
  const double a_out = L * (q_lora + hd) + (Lc * 2 * 2 + Lh * 2) * hd;
  finish_op(cm, at(out, Op::kAProj),
            {L, 2 * T * w_a, w_a * bpp, 0, 0, T * (L * h + a_out) * kActBytes, Rate::kGemm});
  finish_op(cm, at(out, Op::kNormRopeKvWrite),
            {L, L * T * (q_lora + hd) * kRopeFlopsPerElem, 0, T * (L * kv + cm.compressed_kv_bytes_token), 0,
             L * T * (q_lora + hd) * 2 * kActBytes, Rate::kVector});
  const double w_qb = q_lora * heads * hd;
  finish_op(cm, at(out, Op::kQBProj),
            {L, L * 2 * T * w_qb / tp, L * w_qb * bpp / tp, 0, 0,
             L * T * (q_lora + heads * hd / tp) * kActBytes, Rate::kGemm});
  if (Lc > 0) {  // the CSA indexer: wq_b, weights_proj and its compressor; scores of the compressed keys
    const double ih = double(a.index_heads), ihd = double(a.index_head_dim);
    const double w_idx = q_lora * ih * ihd + h * ih + 2 * h * 2 * ihd;
    const double key = double(compressed_index_key_bytes(m));
    finish_op(cm, at(out, Op::kIndexerScore),
              {Lc, Lc * (2 * T * w_idx + 2 * ih * ihd * w.csa_idx_pairs),
               Lc * w_idx * cm.bpp(WeightGroup::kIndexer), 0, Lc * w.csa_idx_read_keys * key,
               Lc * T * (q_lora + ih * ihd) * kActBytes, Rate::kIndexer});
    finish_op(
        cm, at(out, Op::kTopkSelect),
        {Lc, Lc * w.csa_idx_pairs, 0, 0, 0, Lc * T * double(a.index_topk) * kTopkIndexBytes, Rate::kVector});
  }
  // QK and PV over the one head_dim-wide entry (RoPE dims included) per query head and key.
  const double per_key = heads * 4 * hd / tp, act = 2 * heads * hd / tp * kActBytes;
  const double sink_flops = T * heads * kSinkFlopsPerHead / tp;  // a learned sink logit per head
  if (Lc + Lh > 0)
    finish_op(
        cm, at(out, Op::kSparseMla),
        {Lc + Lh, (Lc * w.csa_attn_keys + Lh * w.hca_attn_keys) * per_key, 0,
         (Lc * w.csa_kv_read_keys + Lh * w.hca_kv_read_keys) * kv, 0, (Lc + Lh) * T * act, Rate::kAttention});
  finish_op(cm, at(out, Op::kWindowAttn),
            {L, L * (w.win_attn_keys * per_key + sink_flops), L * heads * kSinkBytes / tp,
             L * w.win_kv_read_keys * kv, 0, L * T * act, Rate::kAttention});
  const double w_o = heads * hd * double(a.o_lora_rank) + double(a.o_groups) * double(a.o_lora_rank) * h;
  finish_op(cm, at(out, Op::kOProj),
            {L, L * 2 * T * w_o / tp, L * w_o * bpp / tp, 0, 0,
             L * T * (heads * hd / tp + double(a.o_groups) * double(a.o_lora_rank) / tp + h) * kActBytes,
             Rate::kGemm});
}

// The MLA / GQA block of every layer: norms, projections, KV writes, indexer, attention.
void attention_block_ops(const CostModel& cm, const RankWork& w, Terms& out) {
  const ModelConfig& m = cm.model;
  if (m.attention == AttentionKind::kCompressed) {
    compressed_attention_ops(cm, w, out);
    return;
  }
  const double T = w.tokens, tp = cm.parallel.tp, bpp = cm.weight_bytes_per_param;
  const double h = double(m.hidden);
  // Norms before every block's mixer and FFN (two per layer; one per Nemotron-H block); the attention ops on
  // the attention layers only (linear ones: linear_mixer_ops).
  const int Ln = m.block_norms(), L = m.attention_layers(), Lf = m.has_indexer() ? m.indexer_full_layers : 0;
  const int Ls = cm.block_sparse_layers;  // MiniMax-M3's block-sparse layers, among the full ones
  const bool mla = m.attention == AttentionKind::kMla;
  // Gemma 4: full layers of their own head width and KV heads; the per-layer figures below are then the
  // means over the attention layers, and attention and KV reads are priced per kind.
  const bool split = !mla && m.full_layer_shape_differs();
  const int La = cm.full_attention_layers, Lw = cm.window_layers;
  auto mean = [&](double full, double win) { return (La * full + Lw * win) / std::max(1, La + Lw); };
  // GQA's fused qkv; with an output gate (Qwen3-Next, Qwen3.5) q_proj yields a gate per query dim too.
  // Gemma 4's full layers whose keys double as values still run the V part: vLLM loads k_proj into the V
  // slot of its qkv_proj (model_executor/models/gemma4.py). Values of their own width (MiMo-V2-Flash):
  // gqa_value_dim.
  auto gqa_a_out = [&](int64_t head_dim, int kv_heads, int64_t value_dim) {
    return double(m.heads * (m.attn_output_gate ? 2 : 1) + kv_heads) * double(head_dim) +
           double(kv_heads) * double(value_dim);
  };
  const double vd = double(m.gqa_value_dim(false)), full_vd = double(m.gqa_value_dim(true));
  const double a_out =
      mla     ? double(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim)
      : split ? mean(gqa_a_out(m.full_layer_head_dim(), m.full_layer_kv_heads(), m.gqa_value_dim(true)),
                     gqa_a_out(m.head_dim, m.kv_heads, m.gqa_value_dim(false)))
              : gqa_a_out(m.head_dim, m.kv_heads, m.gqa_value_dim(false));
  const double w_a = mla ? h * double(m.kv_lora_rank + m.qk_rope_head_dim) +
                               (m.q_lora_rank > 0 ? h * double(m.q_lora_rank) : 0)
                         : h * a_out;
  const double kv_write = split
                              ? mean(double(cm.kv_bytes_token_layer), double(cm.window_kv_bytes_token_layer))
                              : double(cm.kv_bytes_token_layer);
  finish_op(cm, at(out, Op::kEmbed),
            {1, 0, T * h * cm.bpp(WeightGroup::kEmbed), 0, 0, T * h * kActBytes, Rate::kVector});
  finish_op(cm, at(out, Op::kRmsnorm),
            {Ln, Ln * T * h * kNormFlopsPerElem, 0, 0, 0, Ln * T * 3 * h * kActBytes, Rate::kVector});
  // MiniMax-M3's block-sparse layers project index_q (sharded like the KV heads: at least one head a GPU)
  // and the one index_k (replicated) in the same fused GEMM (vLLM MiniMaxM3QKVParallelLinearWithIndexer),
  // and write each token's index key on every GPU.
  const double idx_out =
      Ls > 0 ? std::ceil(double(m.block_sparse.index_heads) / tp) * double(m.block_sparse.index_dim) +
                   double(m.block_sparse.index_dim)
             : 0;
  finish_op(cm, at(out, Op::kAProj),
            {L, L * 2 * T * w_a / tp + Ls * 2 * T * h * idx_out, L * w_a * bpp / tp + Ls * h * idx_out * bpp,
             0, 0, L * T * (h + a_out / tp) * kActBytes + Ls * T * idx_out * kActBytes, Rate::kGemm});
  const double idx_write = Ls > 0 ? Ls * T * double(cm.indexer_bytes_token_layer)
                                  : Lf * T * double(cm.indexer_bytes_token_layer) / tp;
  finish_op(cm, at(out, Op::kNormRopeKvWrite),
            {L, L * T * a_out * kRopeFlopsPerElem / tp, 0, L * T * kv_write / tp, idx_write,
             L * T * a_out * 2 * kActBytes / tp, Rate::kVector});
  if (mla) {
    const double q_in = double(m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden);
    const double w_qb = q_in * m.heads * double(m.qk_nope_head_dim + m.qk_rope_head_dim) +
                        double(m.heads) * double(m.qk_nope_head_dim) * double(m.kv_lora_rank);
    const double q_out = double(m.heads) * double(m.kv_lora_rank + m.qk_rope_head_dim);
    finish_op(cm, at(out, Op::kQBProj),
              {L, L * 2 * T * w_qb / tp, L * w_qb * bpp / tp, 0, 0, L * T * (q_in + q_out / tp) * kActBytes,
               Rate::kGemm});
  }
  if (Lf > 0) indexer_ops(cm, w, out);
  if (Ls > 0) block_sparse_indexer_ops(cm, w, out);
  // GQA per (query, key) and head: QK over the key width, PV over the value width.
  const double attn_flops_per_key =
      mla ? double(m.heads) * 2 * double(2 * m.kv_lora_rank + m.qk_rope_head_dim)
          : double(m.heads) * 2 * (double(m.head_dim) + vd);
  const double attn_act = mla ? double(m.heads) * double(2 * m.kv_lora_rank + m.qk_rope_head_dim)
                              : double(m.heads) * (double(m.head_dim) + vd);
  // The full layers' (Gemma 4: at their own head width), the window layers' at the model's.
  const double full_flops_per_key =
      split ? double(m.heads) * 2 * (double(m.full_layer_head_dim()) + full_vd) : attn_flops_per_key;
  const double full_act = split ? double(m.heads) * (double(m.full_layer_head_dim()) + full_vd) : attn_act;
  // Full layers over the context, window layers over at most W keys (docs/layers.md); the same heads and
  // bytes per key. Sinks: per (query, head) one more logit in the softmax, and the heads' BF16 sink weights.
  const double sink_flops = m.attention_sinks ? T * double(m.heads) * kSinkFlopsPerHead : 0;
  const double sink_bytes = m.attention_sinks ? double(m.heads) * kSinkBytes : 0;
  // The full layers' attention: the dense ones over the context, the block-sparse ones (Ls of La) over their
  // selected blocks.
  const int Ld = La - Ls;
  if (La > 0)
    finish_op(cm, at(out, Op::kSparseMla),
              {La, (Ld * w.attn_keys + Ls * w.bs_attn_keys) * full_flops_per_key / tp + La * sink_flops / tp,
               La * sink_bytes / tp,
               (Ld * w.kv_read_keys + Ls * w.bs_kv_read_keys) * double(cm.kv_bytes_token_layer) / tp, 0,
               La * T * full_act * kActBytes / tp, Rate::kAttention});
  if (Lw > 0)
    finish_op(cm, at(out, Op::kWindowAttn),
              {Lw, Lw * (w.win_attn_keys * attn_flops_per_key + sink_flops) / tp, Lw * sink_bytes / tp,
               Lw * w.win_kv_read_keys * double(cm.window_kv_bytes_token_layer) / tp, 0,
               Lw * T * attn_act * kActBytes / tp, Rate::kAttention});
  const double attn_out = mla     ? double(m.heads) * double(m.v_head_dim)
                          : split ? mean(double(m.heads) * full_vd, double(m.heads) * vd)
                                  : double(m.heads) * vd;
  // MLA with an output gate (Kimi's mla_use_output_gate): g_proj (hidden -> heads x v_head_dim, split by
  // heads) and the sigmoid product, in o_proj's row.
  const double gate_out = mla && m.attn_output_gate ? attn_out : 0;
  const double w_o = (mla ? double(m.heads) * double(m.kv_lora_rank) * double(m.v_head_dim) : 0) +
                     attn_out * h + gate_out * h;
  finish_op(cm, at(out, Op::kOProj),
            {L, L * 2 * T * w_o / tp, L * w_o * bpp / tp, 0, 0,
             L * T * ((attn_out + 2 * gate_out) / tp + h) * kActBytes, Rate::kGemm});
}

// One linear-attention kind's sizes over the whole model (heads split tp ways by the ops below).
struct LinearDims {
  double w_proj = 0;     // the projections' weights (0: hidden x proj_out + out_in x hidden)
  double proj_out = 0;   // in_proj outputs per token
  double out_in = 0;     // out_proj inputs per token
  double conv = 0;       // conv1d channels
  double kernel = 0;     // conv1d width
  double heads = 0;      // state heads
  double key_dim = 0;    // GDN: key head dim; Mamba-2: state size
  double value_dim = 0;  // GDN: value head dim; Mamba-2: head dim
};

LinearDims linear_dims(const ModelConfig& m, MixerKind kind) {
  if (kind == MixerKind::kMamba2) {
    const Mamba2Shape& s = m.mamba;
    const double inner = double(s.inner()), bc = 2.0 * s.groups * double(s.state_size);
    return {0,
            2 * inner + bc + s.heads,
            inner,
            inner + bc,
            double(s.conv_kernel),
            double(s.heads),
            double(s.state_size),
            double(s.head_dim)};
  }
  if (kind == MixerKind::kKda) {
    // modeling_kimi.py KimiDeltaAttention: q, k, v (hidden -> P each), f_a (hidden -> head_dim) then f_b
    // (head_dim -> P), b_proj (hidden -> heads), g_proj (hidden -> P) or g_a / g_b like f, o_proj (P ->
    // hidden); q, k and v convolved; the state heads x head_dim x head_dim.
    const KdaShape& k = m.kda;
    const double h = double(m.hidden), p = double(k.width()), d = double(k.head_dim);
    const double gate_w = k.full_rank_gate ? h * p : h * d + d * p;
    const double gate_out = k.full_rank_gate ? p : d + p;
    return {3 * h * p + h * d + d * p + h * k.heads + gate_w + p * h,
            3 * p + d + p + k.heads + gate_out,
            p,
            3 * p,
            double(k.conv_kernel),
            double(k.heads),
            d,
            d};
  }
  const GdnShape& g = m.gdn;
  const double key = double(g.key_heads) * double(g.key_head_dim);
  const double value = double(g.value_heads) * double(g.value_head_dim);
  return {0,
          2 * key + 2 * value + 2.0 * g.value_heads,
          value,
          2 * key + value,
          double(g.conv_kernel),
          double(g.value_heads),
          double(g.key_head_dim),
          double(g.value_head_dim)};
}

// The chunk the prefill scan works in: flash-linear-attention's chunk_gated_delta_rule (which SGLang and
// vLLM run for GDN) and Mamba-2's SSD kernels (chunk_size 128 in Nemotron-H's config; 64 in FLA) split a
// sequence into chunks of 64 tokens, each an attention-like block plus one state update.
constexpr double kScanChunk = 64;
// FLOPs per state element per token of one recurrent (decode) step of the delta rule: S^T k (2), the rank-1
// update (2), the decay (1), the output q^T S (2); Mamba-2's step (dA x S + dt x B x, C^T S) is fewer, the
// same figure kept for both.
constexpr double kRecurrentFlopsPerStateElem = 7;

// A linear-attention kind's layers: projections (in_proj, out_proj) and the scan. Decode tokens step the
// recurrence, each reading and writing the request's state (conv window and SSM state, linear_state.h);
// prefill runs the chunked scan: per chunk an attention-like block within it and a state update, the
// chunk states written and read back, and each sequence's state read once and written once.
void linear_mixer_ops(const CostModel& cm, const RankWork& w, MixerKind kind, Op proj, Op scan, Terms& out) {
  const ModelConfig& m = cm.model;
  const int Ll = m.mixer_layers(kind);
  if (Ll == 0) return;
  const double T = w.tokens, tp = cm.parallel.tp, h = double(m.hidden);
  const LinearDims d = linear_dims(m, kind);
  const double w_proj = d.w_proj > 0 ? d.w_proj : h * d.proj_out + d.out_in * h;
  finish_op(cm, at(out, proj),
            {Ll, Ll * 2 * T * w_proj / tp, Ll * w_proj * cm.bpp(WeightGroup::kAttention) / tp, 0, 0,
             Ll * T * (2 * h + (d.proj_out + d.out_in) / tp) * kActBytes, Rate::kGemm});
  const LinearStateBytes sb = linear_state_bytes(m, kind, cm.parallel.tp);
  const double state_elems = d.heads / tp * d.key_dim * d.value_dim;
  const double conv_flops = 2 * d.conv / tp * d.kernel;
  const double decode_flops = w.decode_tokens * (kRecurrentFlopsPerStateElem * state_elems + conv_flops);
  const double prefill_flops =
      w.prefill_tokens *
      (d.heads / tp * (2 * kScanChunk * (d.key_dim + d.value_dim) + 4 * d.key_dim * d.value_dim) +
       conv_flops);
  const double state_io = 2 * double(sb.total()) * (w.decode_tokens + w.prefill_seqs) +
                          2 * std::ceil(w.prefill_tokens / kScanChunk) * double(sb.recurrent);
  finish_op(cm, at(out, scan),
            {Ll, Ll * (decode_flops + prefill_flops), 0, Ll * state_io, 0,
             Ll * T * (2 * d.conv + d.out_in + 2 * d.heads) / tp * kActBytes, Rate::kAttention});
}

// FLOPs per snapshot element of one attention-residual mix: the RMSNorm (square, sum, scale, weight: 4),
// the hidden -> 1 projection's multiply-add (2), the weighted sum (2); the softmax over at most a few dozen
// logits per token is left out.
constexpr double kAttnResFlopsPerElem = 8;

// Kimi-K3's block attention residuals (modeling_kimi.py _forward_attn_residual, _apply_attn_res): before
// each layer's attention and FFN, and once before the final norm, every token's input is a softmax mix of its
// residual snapshots (ModelConfig::attn_res_reads: 1,002 snapshot reads a token in Kimi-K3), each normed and
// scored by a hidden -> 1 projection. Memory-bound: each snapshot read once per mix (a fused kernel keeps
// the few per token on chip), the mix written, each block's snapshot written once. The hidden state is
// whole on every GPU under TP, so every GPU mixes all its rank's tokens. aiconfigurator's Kimi-K3 model
// (095f58a, sdk/models/kimi_k3.py) prices it as an elementwise op of 4 x hidden in and 2 x hidden out per
// mix, whatever the snapshots; here the reads grow with the blocks written.
void attn_res_op(const CostModel& cm, const RankWork& w, Terms& out) {
  const ModelConfig& m = cm.model;
  if (m.attn_res_block <= 0) return;
  const double T = w.tokens, h = double(m.hidden), reads = double(m.attn_res_reads());
  const int mixes = 2 * m.layers + 1;
  const double snapshots = std::ceil(double(m.layers) / m.attn_res_block);
  const double weights = (4.0 * m.layers + 2) * h * cm.bpp(WeightGroup::kNorms);
  finish_op(cm, at(out, Op::kAttnRes),
            {mixes, T * reads * h * kAttnResFlopsPerElem, weights, 0, 0,
             T * (reads + mixes + snapshots) * h * kActBytes, Rate::kVector});
}

// The lightning indexer on the full layers: q/k projections, scoring of every cached key, top-k.
void indexer_ops(const CostModel& cm, const RankWork& w, Terms& out) {
  const ModelConfig& m = cm.model;
  const double T = w.tokens, tp = cm.parallel.tp, bpp = cm.bpp(WeightGroup::kIndexer);
  const double h = double(m.hidden);
  const int Lf = m.indexer_full_layers;
  const double q_in = double(m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden);
  const double ihd = double(m.indexer_heads) * double(m.indexer_head_dim);
  const double w_idx = q_in * ihd + h * double(m.indexer_head_dim) + h * m.indexer_heads;
  finish_op(cm, at(out, Op::kIndexerScore),
            {Lf, Lf * (2 * T * w_idx + 2 * ihd * w.idx_pairs) / tp, Lf * w_idx * bpp / tp, 0,
             Lf * w.idx_read_keys * double(cm.indexer_read_bytes_token_layer) / tp,
             Lf * T * (q_in + ihd) * kActBytes / tp, Rate::kIndexer});
  finish_op(cm, at(out, Op::kTopkSelect),
            {Lf, Lf * w.idx_pairs / tp, 0, 0, 0, Lf * T * double(m.indexer_topk) * kTopkIndexBytes / tp,
             Rate::kVector});
}

// MiniMax-M3's indexer on its block-sparse layers (its q / k projections are in a_proj): every query's index
// heads on this GPU (index_q sharded like the KV heads, at least one) against each cached token's BF16 index
// key, read once per query tile; then per block the max over its tokens and heads, and the top-k blocks.
void block_sparse_indexer_ops(const CostModel& cm, const RankWork& w, Terms& out) {
  const BlockSparseShape& b = cm.model.block_sparse;
  const double T = w.tokens, heads = std::ceil(double(b.index_heads) / cm.parallel.tp);
  const int Ls = cm.block_sparse_layers;
  finish_op(cm, at(out, Op::kIndexerScore),
            {Ls, Ls * 2 * heads * double(b.index_dim) * w.bs_idx_pairs, 0, 0,
             Ls * w.bs_idx_read_keys * double(cm.indexer_bytes_token_layer),
             Ls * T * heads * double(b.index_dim) * kActBytes, Rate::kAttention});
  finish_op(cm, at(out, Op::kTopkSelect),
            {Ls, Ls * heads * w.bs_idx_pairs, 0, 0, 0, Ls * T * double(b.topk_blocks) * kTopkIndexBytes,
             Rate::kVector});
}

// Dense MLPs, MoE routers and shared experts on the rank's own tokens (routed experts: expert_op).
void mlp_ops(const CostModel& cm, const RankWork& w, Terms& out) {
  const ModelConfig& m = cm.model;
  const double T = w.tokens, tp = cm.parallel.tp;
  const double h = double(m.hidden);
  const int Lm = m.moe_layers(), Ld = m.mlp_dense_layers();
  if (Ld > 0) {
    const double w_mlp = m.mlp_params(m.dense_intermediate), proj = m.mlp_projections;
    finish_op(cm, at(out, Op::kDenseMlp),
              {Ld, Ld * 2 * T * w_mlp / tp, Ld * w_mlp * cm.bpp(WeightGroup::kDenseMlp) / tp, 0, 0,
               Ld * T * (2 * h + proj * double(m.dense_intermediate) / tp) * kActBytes, Rate::kDenseGemm});
  }
  if (Lm == 0) return;
  const double w_gate = double(m.routed_experts) * h;
  finish_op(cm, at(out, Op::kRouter),
            {Lm, Lm * 2 * T * w_gate / tp, Lm * w_gate * cm.bpp(WeightGroup::kRouter) / tp, 0, 0,
             Lm * T * (h + double(m.routed_experts)) * kActBytes / tp, Rate::kRouterGemm});
  if (m.moe_latent > 0) {
    // A latent MoE's fc1 (hidden -> latent) and fc2 (latent -> hidden) projections: ReplicatedLinear in vLLM
    // (nemotron_h.py), so every GPU runs them whole over its rank's tokens. Kimi-K3's latent norm
    // (latent_moe_use_norm) reads and writes the latent sum once more between them.
    const double w_lat = m.latent_proj_params(), lat = double(m.moe_latent);
    finish_op(cm, at(out, Op::kLatentProj),
              {Lm, Lm * 2 * T * w_lat, Lm * w_lat * cm.bpp(WeightGroup::kSharedExperts), 0, 0,
               Lm * T * 2 * (h + lat + (m.moe_latent_norm ? lat : 0)) * kActBytes, Rate::kSharedGemm});
  }
  if (m.shared_experts > 0) {
    const double w_sh = m.mlp_params(m.moe_intermediate) * m.shared_experts, proj = m.mlp_projections;
    finish_op(cm, at(out, Op::kSharedExpert),
              {Lm, Lm * 2 * T * w_sh / tp, Lm * w_sh * cm.bpp(WeightGroup::kSharedExperts) / tp, 0, 0,
               Lm * T * (2 * h + proj * double(m.moe_intermediate) * m.shared_experts / tp) * kActBytes,
               Rate::kSharedGemm});
  }
}

// The MTP draft passes a rank's step runs after its decode tokens, each through the model's MTP layers:
// k drafts are k sequential passes (each draft feeds the next); 0 without MTP, decodes or an MTP layer.
int draft_passes(const CostModel& cm, const RankWork& w) {
  if (!cm.options.mtp || w.decode_tokens <= 0 || cm.model.mtp_layers <= 0) return 0;
  return int(std::max<int64_t>(1, w.max_drafts));
}

// LM head and sampling for the tokens that need logits; the MTP draft after decode tokens.
void output_ops(const CostModel& cm, const RankWork& w, Terms& out) {
  const ModelConfig& m = cm.model;
  const double tp = cm.parallel.tp;
  const double h = double(m.hidden);
  if (w.lm_tokens > 0) {
    const double V = double(m.vocab), lmT = w.lm_tokens;
    finish_op(cm, at(out, Op::kLmHead),
              {1, 2 * lmT * V * h / tp, V * h * cm.bpp(WeightGroup::kLmHead) / tp, 0, 0,
               lmT * (h * kActBytes + V / tp * kLogitBytes), Rate::kHeadGemm});
    finish_op(cm, at(out, Op::kSample),
              {1, lmT * V * kSampleFlopsPerLogit, 0, 0, 0, lmT * V * kLogitBytes, Rate::kVector});
  }
  if (const int passes = draft_passes(cm, w); passes > 0) {
    // One MTP layer per decode token: an MoE decoder layer plus eh_proj (2h -> h), its weights spread over
    // every GPU; each pass (draft_passes) reads the weights.
    // A first-order figure: the draft is not broken into ops.
    const double active = cm.mtp_active_params;
    finish_op(cm, at(out, Op::kMtpDraft),
              {m.mtp_layers * passes, m.mtp_layers * 2 * w.decode_tokens * active / tp,
               passes * cm.mtp_params * cm.bpp(WeightGroup::kMtp) / cm.parallel.gpus(), 0, 0,
               w.decode_tokens * 4 * h * kActBytes, Rate::kMtpGemm});
  }
}

}  // namespace

double collective_bytes_per_token(const CostModel& cm, Op op) {
  switch (op) {
    case Op::kEmbedAllreduce:
    case Op::kDpAllgather:
    case Op::kReduceScatter:
    case Op::kDenseAllreduce:
    case Op::kAttnAllreduce:
    case Op::kMlpAllreduce:
      return double(cm.model.hidden) * kActBytes;
    case Op::kVocabAllgather:
      return double(cm.model.vocab) * kLogitBytes;
    case Op::kQkNormAllreduce:
      return kQkVarianceBytes;
    // A latent MoE moves its tokens at the latent width (vLLM applies fc1_latent_proj before the MoE's
    // dispatch and fc2_latent_proj after its combine: fused_moe runner, apply_routed_input_transform).
    case Op::kDispatch:
      return 1.0 / cm.parallel.tp * cm.model.experts_per_token * double(cm.model.expert_width()) *
             kDispatchBytes;
    case Op::kCombine:
      return 1.0 / cm.parallel.tp * cm.model.experts_per_token * double(cm.model.expert_width()) *
             kCombineBytes;
    default:
      return 0;
  }
}

// The comm tables are keyed the way nccl-tests sizes a run, by the whole buffer. Their NCCL rows come
// from aiconfigurator's collector (collector/network/collect_nccl.py at 095f58a: `all_gather_perf -b size
// -e size -t <gpus>`, logged as message_size = size / 2 half elements, which scripts/build-profile writes
// back as 2 x message_size bytes), and nccl-tests' size is an all-gather's output, count / nranks from
// each rank (AllGatherGetCollByteCount, nccl-tests src/all_gather.cu), a reduce-scatter's input
// (src/reduce_scatter.cu) and an all-to-all's send buffer of one rank (src/alltoall.cu). aiconfigurator
// queries attention DP's gather and scatter the same way: volume x attention_dp_size (aic-core
// operators/moe_dispatch.rs, NcclOp at num_tokens x attention_dp_size). The ledger's DP gather and
// scatter carry one attention-DP rank's tokens (Term::bytes_each, the seed's formula), a dp_attention-th
// of the buffer every DP rank's tokens make. The all-reduce tables key the rank's own buffer (custom
// all-reduce: message_size = tokens x hidden), the logits gather's bytes_each is already the whole
// gathered logits (b x vocab x 4) and dispatch's and combine's one rank's send buffer: x 1.
double comm_table_scale(const CostModel& cm, Op op) {
  switch (op) {
    case Op::kDpAllgather:
    case Op::kReduceScatter:
      return double(cm.parallel.dp_attention);
    default:
      return 1;
  }
}

namespace {

// The LM head's logits gathered from the vocabulary shards, once a step (the tokens that need logits x
// vocab x kLogitBytes: collective_bytes_per_token). Every layout whose GPUs split the vocabulary runs it.
void vocab_allgather(const CostModel& cm, const RankWork& w, Terms& out) {
  finish_collective(cm, at(out, Op::kVocabAllgather), 1,
                    w.lm_tokens * collective_bytes_per_token(cm, Op::kVocabAllgather));
}

// TensorRT-LLM's and vLLM's collectives (MoeComm::kGatherOrAllReduce; engine_behavior.h and
// engine_behavior.cpp vllm_behavior give the sources), one rank's messages. Attention DP: per MoE layer an
// all-gather of the rank's hidden states before the experts and a reduce-scatter after them; attention, dense
// MLP, shared experts, embedding and LM head are unsharded on the rank (attention DP runs attention at TP 1;
// a tp > 1 under DP adds the attention's all-reduce). The gather's output and the scatter's input are every
// DP rank's tokens (sum(all_rank_num_tokens) rows, or dp x the most with use_dp_padding:
// tensorrt_llm/_torch/distributed/ops.py allgather / reducescatter, an NCCL all-gather or a group of
// broadcasts); the terms carry the rank's share and the comm table is read at the whole buffer
// (comm_table_scale). Otherwise pure TP's: every rank holds the step's tokens, the MoE (or MLP) output joins
// the per-layer all-reduce whatever the EP split, and no token moves between EP ranks.
void gather_or_allreduce_collectives(const CostModel& cm, const RankWork& w, Terms& out) {
  const ModelConfig& m = cm.model;
  const Parallel& p = cm.parallel;
  const double hidden_msg = w.tokens * collective_bytes_per_token(cm, Op::kDpAllgather);
  const int Lm = m.moe_layers();
  if (p.dp()) {
    if (Lm > 0) {
      finish_collective(cm, at(out, Op::kDpAllgather), Lm, hidden_msg);
      finish_collective(cm, at(out, Op::kReduceScatter), Lm, hidden_msg);
    }
    if (p.tp > 1) finish_collective(cm, at(out, Op::kAttnAllreduce), m.mixer_blocks(), hidden_msg);
    return;
  }
  if (p.tp <= 1) return;
  // One after each block's mixer and one after its FFN (Nemotron-H's blocks have one or the other).
  finish_collective(cm, at(out, Op::kEmbedAllreduce), 1, hidden_msg);
  finish_collective(cm, at(out, Op::kAttnAllreduce), m.mixer_blocks(), hidden_msg);
  finish_collective(cm, at(out, Op::kMlpAllreduce), m.ffn_layers(), hidden_msg);
  vocab_allgather(cm, w, out);
}

// SGLang's attention-DP gather and scatter without an all-to-all backend (MoeComm::kLocalExperts under
// attention DP; SGLang 0.5.x, python/sglang/srt/):
//  - every layer's MLP runs in ScatterMode.FULL over the tokens of all DP ranks: a MoE layer whenever
//    --moe-a2a-backend is none, a dense one unless --moe-dense-tp-size 1 (layers/communicator.py
//    LayerScatterModes._compute_mlp_mode; moe_dense_tp_size defaults to None, server_args.py);
//  - before it, dp_gather_partial gathers the hidden states over the whole TP group (all GPUs), and after
//    it the output goes back to the rank (layers/dp_attention.py, communicator.py _scatter_hidden_states);
//  - how depends on the step's DpPaddingMode: a step with a prefill chunk on any rank (is_extend_in_batch)
//    is SUM_LEN (DpPaddingMode.get_dp_padding_mode); a decode step (plain or MTP's TARGET_VERIFY) runs in
//    the CUDA graph, captured with MAX_LEN (get_default_mode_in_cuda_graph, model_executor/
//    cuda_graph_runner.py). Not modelled: an eager decode beyond cuda_graph_max_bs, where
//    get_dp_padding_mode picks MAX_LEN only when sum_len * 2 > max_len * dp (skewed ranks: SUM_LEN).
//  - MAX_LEN: every rank pads to max_len, all_gather_into_tensor gathers dp x max_len tokens, the MoE skips
//    its all-reduce (should_use_reduce_scatter) and dp_reduce_scatter_tensor sums and scatters the output
//    (same size). SUM_LEN: each rank writes its tokens at its offset of a zeroed sum_len buffer and an
//    all-reduce gathers it; the MoE (or dense MLP) all-reduces its output (sum_len) and dp_scatter is a
//    local copy.
//  - No other step-wide gather: the embedding is replicated under DP attention (models/deepseek_v2.py,
//    VocabParallelEmbedding enable_tp=not is_dp_attention_enabled()).
// The terms carry one rank's padded share (max_len tokens); the comm tables are keyed by the whole buffer
// (nccl-tests' -b: all-gather output, reduce-scatter input; aiconfigurator
// collector/network/collect_nccl.py), so comm_table_scale reads them at dp x that. Not priced: the extra
// reduce-scatter over the attention TP group when attention TP > 1, and the padded rows' expert work.
void sglang_dp_gather_collectives(const CostModel& cm, const RankWork& w, Terms& out) {
  const int Lf = cm.model.ffn_layers();
  const double per_token = collective_bytes_per_token(cm, Op::kDpAllgather);
  const double max_len = std::max(w.dp_max_tokens, w.tokens), sum_len = std::max(w.dp_sum_tokens, w.tokens);
  if (!w.dp_extend) {
    finish_collective(cm, at(out, Op::kDpAllgather), Lf, max_len * per_token);
    finish_collective(cm, at(out, Op::kReduceScatter), Lf, max_len * per_token);
  } else {
    finish_collective(cm, at(out, Op::kDenseAllreduce), 2 * int64_t{Lf}, sum_len * per_token);
  }
  if (cm.parallel.gpus() > 1) vocab_allgather(cm, w, out);
}

// q/k norms over all heads (ModelConfig::qk_norm_all_heads) under attention TP: each GPU holds heads / tp of
// a token's q and k, so before normalizing every attention layer all-reduces the partial mean squares over
// the TP group (one call for q and k together: kQkVarianceBytes), on the critical path between the qkv
// projection and RoPE, under any MoE layout (attention stays TP under EP). None at TP 1.
void qk_norm_collectives(const CostModel& cm, const RankWork& w, Terms& out) {
  if (!cm.model.qk_norm_all_heads || cm.parallel.tp <= 1) return;
  finish_collective(cm, at(out, Op::kQkNormAllreduce), cm.model.attention_layers(),
                    w.tokens * collective_bytes_per_token(cm, Op::kQkNormAllreduce));
}

// Whether a step's collectives gather every attention-DP rank's tokens (sglang_dp_gather_collectives: the
// only reader of RankWork's dp_* fields, which step_cost fills only then).
bool gathers_dp_ranks(const CostModel& cm) {
  return cm.moe_comm == MoeComm::kLocalExperts && cm.parallel.dp();
}

// The MoE layers' all-to-all: the rank's tokens to their experts' ranks (FP8) and back (BF16); under TP
// attention every GPU of the rank holds the same tokens and each dispatches its 1/tp slice. The busiest EP
// rank receives expert_imbalance times the mean traffic (and returns it).
void dispatch_and_combine(const CostModel& cm, double tokens, double expert_imbalance, Terms& out) {
  const ModelConfig& m = cm.model;
  const int Lm = m.moe_layers();
  if (cm.parallel.ep <= 1 || Lm <= 0) return;
  const double fan_out = tokens / cm.parallel.tp * m.experts_per_token * double(m.expert_width());
  finish_collective(cm, at(out, Op::kDispatch), Lm, fan_out * expert_imbalance * kDispatchBytes);
  finish_collective(cm, at(out, Op::kCombine), Lm, fan_out * expert_imbalance * kCombineBytes);
}

// vLLM's all-to-all backends under data parallelism (MoeComm::kAllToAllUnderDp; engine_behavior.h): each MoE
// layer's dispatch and combine of the rank's own tokens; attention and dense MLP on those tokens, with their
// all-reduces when the DP rank spans tp > 1 GPUs. Without DP no all-to-all runs: TP's collectives.
void dp_all_to_all_collectives(const CostModel& cm, const RankWork& w, double expert_imbalance, Terms& out) {
  const ModelConfig& m = cm.model;
  const Parallel& p = cm.parallel;
  if (p.tp > 1) {
    const double hidden_msg = w.tokens * collective_bytes_per_token(cm, Op::kAttnAllreduce);
    finish_collective(cm, at(out, Op::kAttnAllreduce), m.mixer_blocks(), hidden_msg);
    finish_collective(cm, at(out, Op::kDenseAllreduce), m.mlp_dense_layers(), hidden_msg);
  }
  dispatch_and_combine(cm, w.tokens, expert_imbalance, out);
}

// Collectives one rank takes part in, with that rank's messages (the seed's formulas).
// expert_imbalance: the busiest EP rank receives that many times the mean dispatch traffic (and returns it).
void rank_collectives(const CostModel& cm, const RankWork& w, double expert_imbalance, Terms& out) {
  qk_norm_collectives(cm, w, out);
  if (gathers_dp_ranks(cm)) {
    sglang_dp_gather_collectives(cm, w, out);
    return;
  }
  switch (cm.moe_comm) {
    case MoeComm::kAllToAll:
    case MoeComm::kLocalExperts:
      break;
    case MoeComm::kGatherOrAllReduce:
      gather_or_allreduce_collectives(cm, w, out);
      return;
    case MoeComm::kAllToAllUnderDp:
      if (cm.parallel.dp())
        dp_all_to_all_collectives(cm, w, expert_imbalance, out);
      else
        gather_or_allreduce_collectives(cm, w, out);
      return;
  }
  const ModelConfig& m = cm.model;
  const Parallel& p = cm.parallel;
  const double T = w.tokens;
  const double hidden_msg = T * collective_bytes_per_token(cm, Op::kDpAllgather);
  const int L = m.layers;
  const bool per_layer = cm.options.dp_gather == DpGather::kPerLayer;
  if (p.gpus() > 1 && !(p.dp() && per_layer))
    finish_collective(cm, at(out, Op::kEmbedAllreduce), 1, hidden_msg);
  if (p.dp()) {
    finish_collective(cm, at(out, Op::kDpAllgather), per_layer ? L : 1, hidden_msg);
    finish_collective(cm, at(out, Op::kReduceScatter), L, hidden_msg);
    if (!per_layer) finish_collective(cm, at(out, Op::kDenseAllreduce), m.mlp_dense_layers(), hidden_msg);
  } else if (p.tp > 1) {
    // One after each block's mixer and one after its FFN (Nemotron-H's blocks have one or the other).
    finish_collective(cm, at(out, Op::kAttnAllreduce), m.mixer_blocks(), hidden_msg);
    finish_collective(cm, at(out, Op::kMlpAllreduce), m.ffn_layers(), hidden_msg);
  }
  if (cm.moe_comm == MoeComm::kAllToAll) dispatch_and_combine(cm, T, expert_imbalance, out);
  if (p.gpus() > 1) vocab_allgather(cm, w, out);
}

// Routed experts over the tokens of every rank, spread over the GPUs with the busiest GPU holding
// expert_imbalance times the mean pairs (1: even); weight reads count only the experts that some token
// touches (uniform routing: 1 - (1 - k/E)^tokens of them).
void expert_op(const CostModel& cm, double all_tokens, double expert_imbalance, Term& t) {
  const ModelConfig& m = cm.model;
  const Parallel& p = cm.parallel;
  const int Lm = m.moe_layers();
  if (Lm == 0 || all_tokens <= 0) return;
  // A latent MoE's experts run at the latent width (expert_width: hidden otherwise).
  const double h = double(m.expert_width()), inter = double(m.moe_intermediate);
  const double expert_params = m.expert_params(), proj = m.mlp_projections;
  const double pairs = all_tokens * m.experts_per_token * expert_imbalance;
  const double touched = 1 - std::pow(1 - double(m.experts_per_token) / m.routed_experts, all_tokens);
  const double local_experts = double(m.routed_experts) / p.ep;
  GpuWork g{Lm,
            Lm * pairs * 2 * expert_params / p.gpus(),
            Lm * local_experts * touched * expert_params * cm.bpp(WeightGroup::kRoutedExperts) / p.moe_tp(),
            0,
            0,
            Lm * pairs * (2 * h + proj * inter / p.moe_tp()) * kActBytes / p.gpus(),
            Rate::kExpertGemm};
  finish_op(cm, t, g);
}

double rank_time(const Terms& t) {
  double s = 0;
  for (const Term& x : t) s += x.time_s;
  return s;
}

void accumulate(StepCost& sc) {
  for (int i = 0; i < kOpCount; ++i) {
    const Term& t = sc.terms[i];
    if (priced(t.source)) {
      sc.profile_s += t.time_s - t.roofline_s;
      sc.activations_s += t.roofline_s;
      if (t.smaller_group) sc.bounded_s += t.time_s;
      continue;
    }
    sc.launch_s += t.launch_s;
    if (is_collective(Op(i))) {
      sc.comm_s += t.memory_s;
      continue;
    }
    if (t.compute_s > t.memory_s) {
      sc.compute_s += t.compute_s;
    } else if (t.rank_hbm_bytes > 0) {
      const double per_byte = t.memory_s / t.rank_hbm_bytes;
      sc.weights_s += t.weight_bytes * per_byte;
      sc.kv_s += t.kv_bytes * per_byte;
      sc.indexer_s += t.indexer_bytes * per_byte;
      sc.activations_s += (t.rank_hbm_bytes - t.weight_bytes - t.kv_bytes - t.indexer_bytes) * per_byte;
    }
  }
  sc.total_s = sc.compute_s + sc.weights_s + sc.kv_s + sc.indexer_s + sc.activations_s + sc.comm_s +
               sc.launch_s + sc.profile_s;
}

}  // namespace

void roofline_rank_terms(const CostModel& cm, const RankWork& w, double expert_imbalance, Terms& out) {
  attention_block_ops(cm, w, out);
  linear_mixer_ops(cm, w, MixerKind::kGatedDeltaNet, Op::kGdnProj, Op::kGdnScan, out);
  linear_mixer_ops(cm, w, MixerKind::kMamba2, Op::kMamba2Proj, Op::kMamba2Scan, out);
  linear_mixer_ops(cm, w, MixerKind::kKda, Op::kKdaProj, Op::kKdaScan, out);
  attn_res_op(cm, w, out);
  mlp_ops(cm, w, out);
  output_ops(cm, w, out);
  rank_collectives(cm, w, expert_imbalance, out);
}

void roofline_expert_term(const CostModel& cm, double all_tokens, double expert_imbalance, Term& t) {
  expert_op(cm, all_tokens, expert_imbalance, t);
}

StepCost step_cost(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank) {
  return step_cost(cm, per_rank, 1.0);
}

StepCost step_cost(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                   double expert_imbalance) {
  assert(expert_imbalance >= 1 && "the busiest EP rank holds at least the mean");
  assert(per_rank.size() <= size_t(cm.parallel.dp_attention) && "more ranks than dp_attention");
  const TimeSource& source = *cm.time_source;
  StepCost sc;
  StepPricing step;
  double best = -1, all_tokens = 0;
  int64_t draft_layers = 0;  // MTP draft layer passes the step runs after its decode (the busiest rank's)
  source.begin_step(cm, per_rank, step);
  // Each busy rank is priced into the buffer the busiest so far does not hold; instance-wide sums apart.
  static const Terms kNoTerms{};
  static_assert(std::is_trivially_copyable_v<Terms>, "Terms are cleared by copying bytes");
  union TermsBuffer {  // left uninitialized: every use starts by clearing it
    TermsBuffer() {}
    Terms terms;
  } buffers[2];
  int busiest = -1;  // buffers[busiest]: the busiest rank's terms
  std::array<double, kOpCount> flops{}, hbm_bytes{};
  // What every rank gathers (RankWork::dp_*): the ranks' tokens, before any rank is priced; summed only
  // where a rank's collectives read them.
  double dp_max_tokens = 0, dp_sum_tokens = 0;
  bool dp_extend = false;
  if (gathers_dp_ranks(cm)) {
    for (const std::span<const SeqWork> rank : per_rank) {
      double tokens = 0;
      for (const SeqWork& s : rank) {
        if (s.new_tokens <= 0) continue;
        tokens += double(s.new_tokens);
        dp_extend = dp_extend || s.prefill;
      }
      dp_max_tokens = std::max(dp_max_tokens, tokens);
      dp_sum_tokens += tokens;
    }
  }
  for (size_t r = 0; r < per_rank.size(); ++r) {
    RankWork w = summarize(cm, per_rank[r]);
    if (w.tokens <= 0) continue;
    w.dp_max_tokens = dp_max_tokens;
    w.dp_sum_tokens = dp_sum_tokens;
    w.dp_extend = dp_extend;
    all_tokens += w.tokens;
    draft_layers = std::max(draft_layers, int64_t{cm.model.mtp_layers} * draft_passes(cm, w));
    const int here = busiest == 0 ? 1 : 0;
    Terms& t = buffers[here].terms;
    std::memcpy(&t, &kNoTerms, sizeof(Terms));  // ~3 KB: a bulk copy, not member by member
    roofline_rank_terms(cm, w, expert_imbalance, t);
    step.moe_tokens += w.tokens;
    source.price_rank(cm, w, r, step, t);
    for (int i = 0; i < kOpCount; ++i) {
      flops[size_t(i)] += t[i].rank_flops;
      hbm_bytes[size_t(i)] += t[i].rank_hbm_bytes;
    }
    const double time = rank_time(t);
    if (time > best) {
      best = time;
      sc.busiest_rank = int(r);
      busiest = here;
    }
  }
  if (busiest >= 0) sc.terms = buffers[busiest].terms;
  for (int i = 0; i < kOpCount; ++i) {
    sc.terms[i].flops = flops[size_t(i)];
    sc.terms[i].hbm_bytes = hbm_bytes[size_t(i)];
  }
  sc.tokens = int64_t(all_tokens);
  Term& ex = sc[Op::kExpertGemm];
  const Term busiest_rank_ex = ex;
  expert_op(cm, all_tokens, expert_imbalance, ex);
  ex.flops = ex.rank_flops * cm.parallel.dp_attention / expert_imbalance;  // instance-wide: no skew
  ex.hbm_bytes = ex.rank_hbm_bytes * cm.parallel.dp_attention;
  source.price_experts(cm, expert_imbalance, step, busiest_rank_ex, ex);
  sc.bytes.weight_read = 0;
  for (const Term& t : sc.terms) sc.bytes.weight_read += t.weight_bytes;
  sc.bytes.kv_write = sc[Op::kNormRopeKvWrite].kv_bytes;
  sc.bytes.indexer_write = sc[Op::kNormRopeKvWrite].indexer_bytes;
  sc.bytes.kv_read = sc[Op::kSparseMla].kv_bytes + sc[Op::kWindowAttn].kv_bytes;
  sc.bytes.indexer_read = sc[Op::kIndexerScore].indexer_bytes;
  accumulate(sc);
  source.finish_step(cm, per_rank, draft_layers, sc);
  return sc;
}

StepCost step_cost(const CostModel& cm, std::span<const SeqWork> rank0) {
  const std::span<const SeqWork> ranks[1] = {rank0};
  return step_cost(cm, std::span<const std::span<const SeqWork>>(ranks, 1));
}

StepCost decode_step(const CostModel& cm, int64_t batch, int64_t context) {
  const std::vector<SeqWork> seqs(size_t(batch), SeqWork{1, context, false, false});
  std::vector<std::span<const SeqWork>> ranks(size_t(cm.parallel.dp_attention), seqs);
  return step_cost(cm, ranks);
}

StepCost prefill_step(const CostModel& cm, int64_t tokens, int64_t prefix, bool last_chunk) {
  const SeqWork one{tokens, prefix, true, last_chunk};
  return step_cost(cm, std::span<const SeqWork>(&one, 1));
}

std::vector<ChunkCost> prefill_chunks(const CostModel& cm, int64_t prompt_tokens, int64_t chunk_tokens,
                                      int64_t prefix) {
  std::vector<ChunkCost> chunks;
  if (prompt_tokens <= 0 || chunk_tokens <= 0) return chunks;
  chunks.reserve(size_t((prompt_tokens + chunk_tokens - 1) / chunk_tokens));
  for (int64_t done = 0; done < prompt_tokens; done += chunk_tokens) {
    const int64_t n = std::min(chunk_tokens, prompt_tokens - done);
    const bool last = done + n == prompt_tokens;
    chunks.push_back({int(chunks.size()), n, prefix + done, prefill_step(cm, n, prefix + done, last)});
  }
  return chunks;
}

}  // namespace tokenline
