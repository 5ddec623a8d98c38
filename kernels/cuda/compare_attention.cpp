// GPU-vs-CPU comparison of the attention path: KV writes, absorptions, indexer, top-k, dense and sparse MLA.
#include "kernels/cpu/kernels.h"
#include "kernels/cuda/compare_util.h"
#include "kernels/cuda/kernels.h"

namespace tokenline::cuda::compare {
namespace {

void compare_kv_writes(Comparer& c, const Table& t, const Host<float>& kv_a, const Host<float>& idx_k) {
  const CompareDims& d = c.d;
  const auto n = static_cast<int32_t>(t.seq.size());
  for (KvLayout layout : {KvLayout::kFp8DsMla, KvLayout::kBf16}) {
    const int64_t bytes =
        static_cast<int64_t>(t.pages) * d.page_size * kv_token_bytes(layout, d.kv_lora, d.rope);
    Host<uint8_t> cache(static_cast<size_t>(bytes), 0);
    DeviceArray<float> dkv(kv_a);
    DeviceArray<uint8_t> dcache(cache);
    KvWriteParams p{
        cache.data(), kv_a.data(), kv_a.data() + d.kv_lora, t.seq.data(), t.pos.data(), t.host(d.page_size),
        layout,       n,           d.kv_lora + d.rope,      d.kv_lora,    d.rope};
    KvWriteParams g{
        dcache.get(), dkv.get(), dkv.get() + d.kv_lora, t.d_seq.get(), t.d_pos.get(), t.device(d.page_size),
        layout,       n,         d.kv_lora + d.rope,    d.kv_lora,     d.rope};
    const std::string op = layout == KvLayout::kFp8DsMla ? "norm_rope_kv_write" : "kv_write_bf16";
    c.run(
        op, dims_string({n, d.kv_lora + d.rope}), [&] { cpu::kv_write(p); }, [&] { kv_write(g); },
        [&] { return mismatch(dcache.to_host(), cache); }, "mismatch", kIdTolerance);
  }
  Host<uint8_t> kcache(static_cast<size_t>(t.pages) * d.page_size * d.idx_dim * 2, 0);
  DeviceArray<float> dk(idx_k);
  DeviceArray<uint8_t> dkcache(kcache);
  IndexKWriteParams p{kcache.data(), idx_k.data(), t.seq.data(), t.pos.data(), t.host(d.page_size), n,
                      d.idx_dim};
  IndexKWriteParams g{dkcache.get(),         dk.get(), t.d_seq.get(), t.d_pos.get(),
                      t.device(d.page_size), n,        d.idx_dim};
  c.run(
      "index_k_write", dims_string({n, d.idx_dim}), [&] { cpu::index_k_write(p); }, [&] { index_k_write(g); },
      [&] { return mismatch(dkcache.to_host(), kcache); }, "mismatch", kIdTolerance);
}

void compare_absorptions(Comparer& c) {
  const CompareDims& d = c.d;
  const auto q = random_vector(static_cast<int64_t>(d.tokens) * d.heads * (d.nope + d.rope), d.seed + 20);
  const auto w = to_bf16(
      random_vector(static_cast<int64_t>(d.heads) * (d.nope + d.v) * d.kv_lora, d.seed + 21, -0.1f, 0.1f));
  const auto ol = random_vector(static_cast<int64_t>(d.tokens) * d.heads * d.kv_lora, d.seed + 22);
  Host<float> ql(static_cast<size_t>(d.tokens) * d.heads * d.kv_lora),
      out(static_cast<size_t>(d.tokens) * d.heads * d.v);
  DeviceArray<float> dq(q), dol(ol), dql(static_cast<int64_t>(ql.size())),
      dout(static_cast<int64_t>(out.size()));
  DeviceArray<uint16_t> dw(w);
  MlaAbsorbQParams p{ql.data(), q.data(), w.data(), DType::kBF16, d.tokens,
                     d.heads,   d.nope,   d.rope,   d.v,          d.kv_lora};
  MlaAbsorbQParams g{dql.get(), dq.get(), dw.get(), DType::kBF16, d.tokens,
                     d.heads,   d.nope,   d.rope,   d.v,          d.kv_lora};
  c.run(
      "mla_absorb_q", dims_string({d.tokens, d.heads, d.nope, d.kv_lora}), [&] { cpu::mla_absorb_q(p); },
      [&] { mla_absorb_q(g); }, [&] { return nmse(dql.to_host(), ql); }, "nmse", kFloatTolerance);
  MlaAbsorbOutParams po{out.data(), ol.data(), w.data(), DType::kBF16, d.tokens,
                        d.heads,    d.nope,    d.v,      d.kv_lora};
  MlaAbsorbOutParams go{dout.get(), dol.get(), dw.get(), DType::kBF16, d.tokens,
                        d.heads,    d.nope,    d.v,      d.kv_lora};
  c.run(
      "mla_absorb_out", dims_string({d.tokens, d.heads, d.kv_lora, d.v}), [&] { cpu::mla_absorb_out(po); },
      [&] { mla_absorb_out(go); }, [&] { return nmse(dout.to_host(), out); }, "nmse", kFloatTolerance);
}

// Indexer scores and top-k on the CPU-written index-key cache; returns the CPU top-k for sparse MLA.
Host<int32_t> compare_indexer(Comparer& c, const Table& t, const Host<float>& idx_k) {
  const CompareDims& d = c.d;
  const auto n = static_cast<int32_t>(t.seq.size());
  const int32_t max_ctx = d.context + 1;
  Host<uint8_t> kcache(static_cast<size_t>(t.pages) * d.page_size * d.idx_dim * 2, 0);
  cpu::index_k_write(
      {kcache.data(), idx_k.data(), t.seq.data(), t.pos.data(), t.host(d.page_size), n, d.idx_dim});
  const auto q = random_vector(static_cast<int64_t>(d.tokens) * d.idx_heads * d.idx_dim, d.seed + 23);
  const auto w = random_vector(static_cast<int64_t>(d.tokens) * d.idx_heads, d.seed + 24);
  Host<float> scores(static_cast<size_t>(d.tokens) * max_ctx);
  DeviceArray<uint8_t> dk(kcache);
  DeviceArray<float> dq(q), dw(w), ds(static_cast<int64_t>(scores.size()));
  IndexerScoreParams p{
      scores.data(),       q.data(), w.data(),    kcache.data(), t.q_seq.data(), t.q_pos.data(),
      t.host(d.page_size), d.tokens, d.idx_heads, d.idx_dim,     max_ctx};
  IndexerScoreParams g{
      ds.get(), dq.get(),    dw.get(),  dk.get(), t.d_q_seq.get(), t.d_q_pos.get(), t.device(d.page_size),
      d.tokens, d.idx_heads, d.idx_dim, max_ctx};
  c.run(
      "indexer_score", dims_string({d.tokens, d.idx_heads, d.idx_dim, max_ctx}),
      [&] { cpu::indexer_score(p); }, [&] { indexer_score(g); }, [&] { return nmse(ds.to_host(), scores); },
      "nmse", kFloatTolerance);
  Host<int32_t> topk(static_cast<size_t>(d.tokens) * d.topk);
  DeviceArray<float> dscores(scores);
  DeviceArray<int32_t> dtopk(static_cast<int64_t>(topk.size()));
  TopkParams tp{topk.data(), scores.data(), t.q_pos.data(), d.tokens, max_ctx, d.topk};
  TopkParams tg{dtopk.get(), dscores.get(), t.d_q_pos.get(), d.tokens, max_ctx, d.topk};
  c.run(
      "topk_select", dims_string({d.tokens, max_ctx, d.topk}), [&] { cpu::topk_select(tp); },
      [&] { topk_select(tg); }, [&] { return mismatch(dtopk.to_host(), topk); }, "mismatch", kIdTolerance);
  return topk;
}

void compare_mla(Comparer& c, const Table& t, const Host<float>& kv_a, const Host<int32_t>& topk) {
  const CompareDims& d = c.d;
  const auto n = static_cast<int32_t>(t.seq.size());
  const KvLayout layout = KvLayout::kFp8DsMla;
  Host<uint8_t> cache(static_cast<size_t>(t.pages) * d.page_size * kv_token_bytes(layout, d.kv_lora, d.rope),
                      0);
  cpu::kv_write({cache.data(), kv_a.data(), kv_a.data() + d.kv_lora, t.seq.data(), t.pos.data(),
                 t.host(d.page_size), layout, n, d.kv_lora + d.rope, d.kv_lora, d.rope});
  const auto ql =
      random_vector(static_cast<int64_t>(d.tokens) * d.heads * d.kv_lora, d.seed + 25, -0.2f, 0.2f);
  const auto qr = random_vector(static_cast<int64_t>(d.tokens) * d.heads * d.rope, d.seed + 26, -0.2f, 0.2f);
  Host<float> out(ql.size());
  DeviceArray<uint8_t> dcache(cache);
  DeviceArray<float> dql(ql), dqr(qr), dout(static_cast<int64_t>(out.size()));
  DeviceArray<int32_t> dtopk(topk);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d.nope + d.rope));
  MlaAttentionParams p{out.data(),     ql.data(),      qr.data(),   cache.data(),
                       t.q_seq.data(), t.q_pos.data(), topk.data(), t.host(d.page_size),
                       layout,         d.tokens,       d.heads,     d.kv_lora,
                       d.rope,         d.rope,         d.topk,      scale};
  MlaAttentionParams g{dout.get(),      dql.get(),       dqr.get(),   dcache.get(),
                       t.d_q_seq.get(), t.d_q_pos.get(), dtopk.get(), t.device(d.page_size),
                       layout,          d.tokens,        d.heads,     d.kv_lora,
                       d.rope,          d.rope,          d.topk,      scale};
  c.run(
      "sparse_mla", dims_string({d.tokens, d.heads, d.topk, d.kv_lora + d.rope}),
      [&] { cpu::mla_attention_sparse(p); }, [&] { mla_attention_sparse(g); },
      [&] { return nmse(dout.to_host(), out); }, "nmse", kExpTolerance);
  c.run(
      "dense_mla", dims_string({d.tokens, d.heads, d.context + 1, d.kv_lora + d.rope}),
      [&] { cpu::mla_attention_dense(p); }, [&] { mla_attention_dense(g); },
      [&] { return nmse(dout.to_host(), out); }, "nmse", kExpTolerance);
}

}  // namespace

void compare_attention_ops(Comparer& c, const Table& t) {
  const CompareDims& d = c.d;
  const auto kv_a =
      random_vector(static_cast<int64_t>(t.seq.size()) * (d.kv_lora + d.rope), d.seed + 27, -2.0f, 2.0f);
  const auto idx_k = random_vector(static_cast<int64_t>(t.seq.size()) * d.idx_dim, d.seed + 28);
  compare_kv_writes(c, t, kv_a, idx_k);
  compare_absorptions(c);
  const Host<int32_t> topk = compare_indexer(c, t, idx_k);
  compare_mla(c, t, kv_a, topk);
}

}  // namespace tokenline::cuda::compare
