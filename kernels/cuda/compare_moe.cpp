// GPU-vs-CPU comparison of the MoE path (router, grouped experts) and of sampling.
#include "kernels/cpu/kernels.h"
#include "kernels/cuda/compare_util.h"
#include "kernels/cuda/kernels.h"

namespace tokenline::cuda::compare {

void compare_moe_ops(Comparer& c) {
  const CompareDims& d = c.d;
  const int64_t slots = static_cast<int64_t>(d.tokens) * d.expert_topk;
  const auto logits = random_vector(static_cast<int64_t>(d.tokens) * d.experts, d.seed + 40, -3.0f, 3.0f);
  const auto bias = random_vector(d.experts, d.seed + 41, -0.1f, 0.1f);
  Host<int32_t> ids(static_cast<size_t>(slots));
  Host<float> weights(static_cast<size_t>(slots));
  DeviceArray<float> dlogits(logits), dbias(bias), dweights(slots);
  DeviceArray<int32_t> dids(slots);
  RouterParams p{ids.data(), weights.data(), logits.data(), bias.data(), d.tokens, d.experts,
                 d.n_group,  d.topk_group,   d.expert_topk, 2.5f,        true};
  RouterParams g{dids.get(), dweights.get(), dlogits.get(), dbias.get(), d.tokens, d.experts,
                 d.n_group,  d.topk_group,   d.expert_topk, 2.5f,        true};
  c.run(
      "router", dims_string({d.tokens, d.experts, d.expert_topk}), [&] { cpu::router(p); },
      [&] { router(g); }, [&] { return mismatch(dids.to_host(), ids) + nmse(dweights.to_host(), weights); },
      "mismatch+nmse", kExpTolerance);

  const auto x = random_vector(static_cast<int64_t>(d.tokens) * d.hidden, d.seed + 42);
  const auto w_gu = to_bf16(
      random_vector(static_cast<int64_t>(d.experts) * 2 * d.inter * d.hidden, d.seed + 43, -0.05f, 0.05f));
  const auto w_dn = to_bf16(
      random_vector(static_cast<int64_t>(d.experts) * d.hidden * d.inter, d.seed + 44, -0.05f, 0.05f));
  Host<float> out(x.size());
  DeviceArray<float> dx(x), dw(weights), dout(static_cast<int64_t>(out.size()));
  DeviceArray<int32_t> dids_cpu(ids);
  DeviceArray<uint16_t> dgu(w_gu), ddn(w_dn);
  MoeExpertsParams mp{out.data(),   x.data(), ids.data(),    weights.data(), w_gu.data(), w_dn.data(),
                      DType::kBF16, d.tokens, d.expert_topk, d.hidden,       d.inter,     0,
                      d.experts};
  MoeExpertsParams mg{dout.get(), dx.get(),      dids_cpu.get(), dw.get(), dgu.get(), ddn.get(), DType::kBF16,
                      d.tokens,   d.expert_topk, d.hidden,       d.inter,  0,         d.experts};
  c.run(
      "expert_gemm", dims_string({d.tokens, d.expert_topk, d.experts, d.hidden, d.inter}),
      [&] { cpu::moe_experts(mp); }, [&] { moe_experts(mg); }, [&] { return nmse(dout.to_host(), out); },
      "nmse", kExpTolerance);
}

void compare_sampling(Comparer& c) {
  const CompareDims& d = c.d;
  const auto logits = random_vector(static_cast<int64_t>(d.tokens) * d.vocab, d.seed + 50, -8.0f, 8.0f);
  Host<float> temperature(static_cast<size_t>(d.tokens)), top_p(static_cast<size_t>(d.tokens));
  Host<int32_t> top_k(static_cast<size_t>(d.tokens)), out(static_cast<size_t>(d.tokens));
  Host<uint64_t> seeds(static_cast<size_t>(d.tokens)), steps(static_cast<size_t>(d.tokens), 5);
  for (int32_t r = 0; r < d.tokens; ++r) {  // rows cycle through greedy, temperature only, top-k, top-p
    temperature[r] = r % 4 == 0 ? 0.0f : 0.8f;
    top_k[r] = r % 4 == 2 ? 50 : 0;
    top_p[r] = r % 4 == 3 ? 0.9f : 1.0f;
    seeds[r] = 1000 + static_cast<uint64_t>(r);
  }
  DeviceArray<float> dl(logits), dt(temperature), dp(top_p);
  DeviceArray<int32_t> dk(top_k), dout(d.tokens);
  DeviceArray<uint64_t> ds(seeds), dsteps(steps);
  SampleParams p{out.data(),   logits.data(), temperature.data(), top_k.data(), top_p.data(),
                 seeds.data(), steps.data(),  d.tokens,           d.vocab};
  SampleParams g{dout.get(), dl.get(),     dt.get(), dk.get(), dp.get(),
                 ds.get(),   dsteps.get(), d.tokens, d.vocab};
  c.run(
      "sample", dims_string({d.tokens, d.vocab}), [&] { cpu::sample(p); }, [&] { sample(g); },
      [&] { return mismatch(dout.to_host(), out); }, "mismatch", kIdTolerance);
}

}  // namespace tokenline::cuda::compare
