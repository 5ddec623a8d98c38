#include <catch2/catch.hpp>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

std::vector<float> naive_gemm(const std::vector<float>& x, const std::vector<float>& w, int m, int n, int k) {
  std::vector<float> out(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int c = 0; c < k; ++c) acc += static_cast<double>(x[i * k + c]) * w[j * k + c];
      out[i * n + j] = static_cast<float>(acc);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("gemm: f32, bf16 and block-scaled fp8 weights against a double-precision loop") {
  const int m = 7, n = 300, k = 260;  // n, k not multiples of the 128 scale block
  const auto x = test::random_vector(m * k, 11);
  const auto w = test::random_vector(n * k, 12);
  std::vector<float> out(m * n);
  cpu::gemm({out.data(), x.data(), w.data(), nullptr, DType::kF32, m, n, k, false});
  CHECK(test::nmse(out, naive_gemm(x, w, m, n, k)) < 1e-12);

  const auto w_bf16 = test::to_bf16(w);
  std::vector<float> w_widened(w.size());
  for (size_t i = 0; i < w.size(); ++i) w_widened[i] = bf16_to_float(w_bf16[i]);
  cpu::gemm({out.data(), x.data(), w_bf16.data(), nullptr, DType::kBF16, m, n, k, false});
  CHECK(test::nmse(out, naive_gemm(x, w_widened, m, n, k)) < 1e-12);

  // FP8 with one scale per 128x128 block: quantize w / scale, expect the dequantized product.
  const int sr = (n + 127) / 128, sc = (k + 127) / 128;
  const auto scales = test::random_vector(sr * sc, 13, 0.001f, 0.01f);
  std::vector<uint8_t> w_fp8(w.size());
  std::vector<float> w_dequant(w.size());
  for (int j = 0; j < n; ++j) {
    for (int c = 0; c < k; ++c) {
      const float s = scales[(j / 128) * sc + c / 128];
      w_fp8[j * k + c] = float_to_fp8e4m3(w[j * k + c] / s);
      w_dequant[j * k + c] = fp8e4m3_to_float(w_fp8[j * k + c]) * s;
    }
  }
  cpu::gemm({out.data(), x.data(), w_fp8.data(), scales.data(), DType::kF8E4M3, m, n, k, false});
  CHECK(test::nmse(out, naive_gemm(x, w_dequant, m, n, k)) < 1e-12);

  auto acc = out;
  cpu::gemm({acc.data(), x.data(), w_fp8.data(), scales.data(), DType::kF8E4M3, m, n, k, true});
  CHECK(acc[5] == Approx(2 * out[5]));
}

TEST_CASE("MLA absorption: q_latent . latent equals q_nope . (W_UK latent), W_UV output equals v") {
  const int heads = 4, nope = 32, rope = 16, v = 24, kv_lora = 64, tokens = 3;
  const auto q = test::random_vector(tokens * heads * (nope + rope), 14);
  const auto w_kv_b = test::random_vector(heads * (nope + v) * kv_lora, 15);
  const auto latent = test::random_vector(kv_lora, 16);
  std::vector<float> q_latent(tokens * heads * kv_lora), out(tokens * heads * v);
  cpu::mla_absorb_q(
      {q_latent.data(), q.data(), w_kv_b.data(), DType::kF32, tokens, heads, nope, rope, v, kv_lora});
  for (int t = 0; t < tokens; ++t) {
    for (int h = 0; h < heads; ++h) {
      double absorbed = 0.0, explicit_dot = 0.0;
      for (int c = 0; c < kv_lora; ++c) absorbed += q_latent[(t * heads + h) * kv_lora + c] * latent[c];
      for (int d = 0; d < nope; ++d) {
        double k_nope = 0.0;  // k_nope[h, d] = W_UK[h, d, :] . latent
        for (int c = 0; c < kv_lora; ++c) k_nope += w_kv_b[(h * (nope + v) + d) * kv_lora + c] * latent[c];
        explicit_dot += q[(t * heads + h) * (nope + rope) + d] * k_nope;
      }
      CHECK(absorbed == Approx(explicit_dot).epsilon(1e-4).margin(1e-4));
    }
  }
  const auto o_latent = test::random_vector(tokens * heads * kv_lora, 17);
  cpu::mla_absorb_out(
      {out.data(), o_latent.data(), w_kv_b.data(), DType::kF32, tokens, heads, nope, v, kv_lora});
  double want = 0.0;  // token 2, head 3, v-dim 5
  for (int c = 0; c < kv_lora; ++c)
    want += o_latent[(2 * heads + 3) * kv_lora + c] * w_kv_b[(3 * (nope + v) + nope + 5) * kv_lora + c];
  CHECK(out[(2 * heads + 3) * v + 5] == Approx(want).epsilon(1e-4));
}
