// GPU-vs-CPU comparison of every kernel. Wall-clock timing is only reported, never used in results.
#include "kernels/cuda/backend_compare.h"

#include "kernels/cpu/kernels.h"
#include "kernels/cuda/compare_util.h"
#include "kernels/cuda/kernels.h"

namespace tokenline::cuda {
namespace compare {

namespace {

// Embedding lookup from a BF16 table.
void compare_embedding(Comparer& c) {
  const CompareDims& d = c.d;
  const auto table = to_bf16(random_vector(static_cast<int64_t>(d.vocab) * d.hidden, d.seed + 1));
  Host<int32_t> ids(static_cast<size_t>(d.tokens));
  for (int32_t t = 0; t < d.tokens; ++t) ids[t] = (t * 7919) % d.vocab;
  Host<float> out(static_cast<size_t>(d.tokens) * d.hidden);
  DeviceArray<uint16_t> dt(table);
  DeviceArray<int32_t> di(ids);
  DeviceArray<float> dout(static_cast<int64_t>(out.size()));
  EmbeddingParams p{out.data(), table.data(), ids.data(), DType::kBF16, d.tokens, d.hidden, 0, d.vocab};
  EmbeddingParams g{dout.get(), dt.get(), di.get(), DType::kBF16, d.tokens, d.hidden, 0, d.vocab};
  c.run(
      "embedding", dims_string({d.tokens, d.hidden}), [&] { cpu::embedding(p); }, [&] { embedding(g); },
      [&] { return nmse(dout.to_host(), out); }, "nmse", 0.0);
}

// Residual add + RMSNorm.
void compare_rmsnorm(Comparer& c) {
  const CompareDims& d = c.d;
  const auto x = random_vector(static_cast<int64_t>(d.tokens) * d.hidden, d.seed + 2);
  const auto res0 = random_vector(static_cast<int64_t>(d.tokens) * d.hidden, d.seed + 3);
  const auto w = random_vector(d.hidden, d.seed + 4, 0.5f, 1.5f);
  Host<float> out(x.size()), res = res0;
  DeviceArray<float> dx(x), dw(w), dout(static_cast<int64_t>(x.size()));
  RmsNormParams p{out.data(), res.data(), x.data(), w.data(), d.tokens, d.hidden, d.hidden, d.hidden, 1e-6f};
  RmsNormParams g{dout.get(), nullptr, dx.get(), dw.get(), d.tokens, d.hidden, d.hidden, d.hidden, 1e-6f};
  // The GPU check runs without the in-place residual so repeats stay comparable; residual is checked once.
  DeviceArray<float> dres_once(res0);
  RmsNormParams g_res = g;
  g_res.residual = dres_once.get();
  rmsnorm(g_res);
  device_synchronize();
  const double res_err = nmse(dres_once.to_host(), [&] {
    Host<float> r = res0;
    for (size_t i = 0; i < r.size(); ++i) r[i] += x[i];
    return r;
  }());
  g.x = dres_once.get();
  c.run(
      "rmsnorm", dims_string({d.tokens, d.hidden}), [&] { cpu::rmsnorm(p); }, [&] { rmsnorm(g); },
      [&] { return std::max(res_err, nmse(dout.to_host(), out)); }, "nmse", kExpTolerance);
}

// out = x w^T with typed weights (FP8 weights are stored x1000 with block scales 0.001).
void compare_gemm(Comparer& c, const std::string& op, int32_t m, int32_t n, int32_t k, DType dtype,
                  uint64_t seed) {
  const auto x = random_vector(static_cast<int64_t>(m) * k, seed);
  const auto wf = random_vector(static_cast<int64_t>(n) * k, seed + 100, -0.05f, 0.05f);
  Host<uint8_t> w(wf.size() * static_cast<size_t>(dtype_bytes(dtype)));
  for (size_t i = 0; i < wf.size(); ++i) {
    switch (dtype) {
      case DType::kF32:
        std::memcpy(w.data() + 4 * i, &wf[i], 4);
        break;
      case DType::kBF16: {
        const uint16_t b = float_to_bf16(wf[i]);
        std::memcpy(w.data() + 2 * i, &b, 2);
        break;
      }
      case DType::kF8E4M3:
        w[i] = float_to_fp8e4m3(wf[i] * 1000.0f);
        break;
    }
  }
  const int32_t sr = (n + kWeightScaleBlock - 1) / kWeightScaleBlock,
                sc = (k + kWeightScaleBlock - 1) / kWeightScaleBlock;
  const Host<float> scales(static_cast<size_t>(sr) * sc, 0.001f);  // undoes the x1000 above
  const float* scale = dtype == DType::kF8E4M3 ? scales.data() : nullptr;
  Host<float> out(static_cast<size_t>(m) * n);
  DeviceArray<float> dx(x), ds(scales), dout(static_cast<int64_t>(out.size()));
  DeviceArray<uint8_t> dw(w);
  GemmParams p{out.data(), x.data(), w.data(), scale, dtype, m, n, k, false};
  GemmParams g{dout.get(), dx.get(), dw.get(), scale ? ds.get() : nullptr, dtype, m, n, k, false};
  c.run(
      op, dims_string({m, n, k}) + " " + dtype_name(dtype), [&] { cpu::gemm(p); }, [&] { gemm(g); },
      [&] { return nmse(dout.to_host(), out); }, "nmse", kFloatTolerance);
}

// LayerNorm with bias (the indexer's key norm).
void compare_layernorm(Comparer& c) {
  const CompareDims& d = c.d;
  const auto x = random_vector(static_cast<int64_t>(d.tokens) * d.idx_dim, d.seed + 14, -2.0f, 3.0f);
  const auto w = random_vector(d.idx_dim, d.seed + 15, 0.5f, 1.5f), b = random_vector(d.idx_dim, d.seed + 16);
  Host<float> out(x.size());
  DeviceArray<float> dx(x), dw(w), db(b), dout(static_cast<int64_t>(out.size()));
  c.run(
      "layernorm", dims_string({d.tokens, d.idx_dim}),
      [&] {
        cpu::layernorm({out.data(), x.data(), w.data(), b.data(), d.tokens, d.idx_dim, 1e-6f});
      },
      [&] {
        layernorm({dout.get(), dx.get(), dw.get(), db.get(), d.tokens, d.idx_dim, 1e-6f});
      },
      [&] { return nmse(dout.to_host(), out); }, "nmse", kExpTolerance);
}

// RoPE in place on the rope slice of q, with a YaRN-style frequency table.
void compare_rope(Comparer& c) {
  const CompareDims& d = c.d;
  const int32_t stride = d.nope + d.rope;
  const auto q0 = random_vector(static_cast<int64_t>(d.tokens) * d.heads * stride, d.seed + 9);
  Host<int32_t> pos(static_cast<size_t>(d.tokens));
  for (int32_t t = 0; t < d.tokens; ++t) pos[t] = d.context + 1000 * t;
  Host<float> q = q0;
  DeviceArray<float> dq(q0);
  DeviceArray<int32_t> dpos(pos);
  Host<float> inv_freq(static_cast<size_t>(d.rope / 2));  // YaRN-like: the low half interpolated by 40
  for (int32_t i = 0; i < d.rope / 2; ++i) {
    inv_freq[i] = static_cast<float>(std::pow(10000.0, -2.0 * i / d.rope) / (i < d.rope / 4 ? 1.0 : 40.0));
  }
  DeviceArray<float> dfreq(inv_freq);
  RopeParams p{q.data(), pos.data(), d.tokens, d.heads, stride, d.nope, d.rope, 10000.0f, inv_freq.data()};
  RopeParams g{dq.get(), dpos.get(), d.tokens, d.heads, stride, d.nope, d.rope, 10000.0f, dfreq.get()};
  c.run(
      "rope", dims_string({d.tokens, d.heads, d.rope}), [&] { cpu::rope(p); }, [&] { rope(g); },
      [&] {
        const auto got = dq.to_host();
        copy_to_device(dq.get(), q0.data(), dq.bytes());
        return nmse(got, q);
      },
      "nmse", kFloatTolerance);
}

// SiLU * up and the MTP input.
void compare_activations(Comparer& c) {
  const CompareDims& d = c.d;
  const auto gu = random_vector(static_cast<int64_t>(d.tokens) * 2 * d.inter, d.seed + 10, -4.0f, 4.0f);
  Host<float> out(static_cast<size_t>(d.tokens) * d.inter);
  DeviceArray<float> dgu(gu), dout(static_cast<int64_t>(out.size()));
  c.run(
      "silu_mul", dims_string({d.tokens, d.inter}),
      [&] {
        cpu::silu_mul({out.data(), gu.data(), d.tokens, d.inter});
      },
      [&] {
        silu_mul({dout.get(), dgu.get(), d.tokens, d.inter});
      },
      [&] { return nmse(dout.to_host(), out); }, "nmse", kExpTolerance);
  const auto e = random_vector(static_cast<int64_t>(d.tokens) * d.hidden, d.seed + 11);
  const auto h = random_vector(static_cast<int64_t>(d.tokens) * d.hidden, d.seed + 12);
  const auto nw = random_vector(d.hidden, d.seed + 13, 0.5f, 1.5f);
  Host<float> mtp(static_cast<size_t>(d.tokens) * 2 * d.hidden);
  DeviceArray<float> de(e), dh(h), dn(nw), dm(static_cast<int64_t>(mtp.size()));
  c.run(
      "mtp_input", dims_string({d.tokens, 2 * d.hidden}),
      [&] {
        cpu::mtp_input({mtp.data(), e.data(), h.data(), nw.data(), nw.data(), d.tokens, d.hidden, 1e-6f});
      },
      [&] {
        mtp_input({dm.get(), de.get(), dh.get(), dn.get(), dn.get(), d.tokens, d.hidden, 1e-6f});
      },
      [&] { return nmse(dm.to_host(), mtp); }, "nmse", kExpTolerance);
  // scale_add updates out in place, so each call starts from out0 again (the copy is timed with it).
  const auto out0 = random_vector(static_cast<int64_t>(d.tokens) * d.hidden, d.seed + 14);
  Host<float> acc(out0.size());
  DeviceArray<float> dacc(static_cast<int64_t>(out0.size()));
  const auto n = static_cast<int64_t>(out0.size());
  c.run(
      "scale_add", dims_string({d.tokens, d.hidden}),
      [&] {
        acc = out0;
        cpu::scale_add({acc.data(), e.data(), n, 0.5f, 2.0f});
      },
      [&] {
        copy_to_device(dacc.get(), out0.data(), dacc.bytes());
        scale_add({dacc.get(), de.get(), n, 0.5f, 2.0f});
      },
      [&] { return nmse(dacc.to_host(), acc); }, "nmse", kExpTolerance);
}

}  // namespace

void compare_dense_ops(Comparer& c) {
  const CompareDims& d = c.d;
  compare_embedding(c);
  compare_rmsnorm(c);
  compare_gemm(c, "a_proj", d.tokens, d.q_lora + d.kv_lora + d.rope, d.hidden, DType::kF8E4M3, d.seed + 5);
  compare_gemm(c, "q_b_proj", d.tokens, d.heads * (d.nope + d.rope), d.q_lora, DType::kBF16, d.seed + 6);
  compare_gemm(c, "o_proj", d.tokens, d.hidden, d.heads * d.v, DType::kF32, d.seed + 7);
  compare_gemm(c, "lm_head", d.tokens, d.vocab, d.hidden, DType::kBF16, d.seed + 8);
  compare_layernorm(c);
  compare_rope(c);
  compare_activations(c);
}

}  // namespace compare

CompareDims tiny_dims() {
  return CompareDims{};
}

CompareDims check_dims() {
  CompareDims d;
  d.tokens = 32;
  d.context = 2047;
  d.page_size = 64;
  d.hidden = 6144;
  d.heads = 16;  // GLM-5.3's 64 attention heads / TP 4
  d.q_lora = 2048, d.kv_lora = 512, d.rope = 64, d.nope = 192, d.v = 256;
  d.idx_heads = 32, d.idx_dim = 128, d.topk = 2048;
  d.experts = 32, d.expert_topk = 8, d.n_group = 8, d.topk_group = 4,
  d.inter = 2048;        // one EP-8 shard of 256
  d.vocab = 154880 / 8;  // lm_head vocab shard at TP 8
  d.gpu_repeats = 20;
  return d;
}

std::vector<OpComparison> compare_backends(const CompareDims& dims) {
  compare::Comparer c{dims, {}};
  compare::compare_dense_ops(c);
  const compare::Table table(dims);
  compare::compare_attention_ops(c, table);
  compare::compare_moe_ops(c);
  compare::compare_sampling(c);
  return c.results;
}

}  // namespace tokenline::cuda
