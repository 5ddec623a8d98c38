#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

constexpr int32_t kHidden = 256, kInter = 64, kExperts = 8, kTokens = 6;

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

// One SwiGLU expert applied to all rows through the same kernels the MoE uses.
std::vector<float> expert_forward(const std::vector<float>& x, const float* w_gate_up, const float* w_down) {
  std::vector<float> gate_up(kTokens * 2 * kInter), act(kTokens * kInter), y(kTokens * kHidden);
  cpu::gemm({gate_up.data(), x.data(), w_gate_up, nullptr, DType::kF32, kTokens, 2 * kInter, kHidden, false});
  cpu::silu_mul({act.data(), gate_up.data(), kTokens, kInter});
  cpu::gemm({y.data(), act.data(), w_down, nullptr, DType::kF32, kTokens, kHidden, kInter, false});
  return y;
}

}  // namespace

TEST_CASE("router: group-limited top-k picks inside the best groups, weights normalized and scaled") {
  // Groups of two: {0,1} has the single best expert but a weak partner; {2,3} and {4,5} win on pair sums.
  const std::vector<float> logits = {3.0f, -5.0f, 1.0f, 1.0f, 0.5f, 0.5f, -1.0f, -1.0f};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  cpu::router({ids.data(), w.data(), logits.data(), nullptr, 1, kExperts, 4, 2, 2, 2.5f, true});
  CHECK(ids == std::vector<int32_t>{2, 3});  // tie between 2 and 3 keeps both; 0 is outside the groups
  CHECK(w[0] == Approx(1.25f));
  CHECK(w[1] == Approx(1.25f));

  cpu::router({ids.data(), w.data(), logits.data(), nullptr, 1, kExperts, 1, 1, 2, 2.5f, true});
  CHECK(ids == std::vector<int32_t>{0, 2});
  CHECK(w[0] == Approx(2.5f * sigmoid(3.0f) / (sigmoid(3.0f) + sigmoid(1.0f))));

  // The correction bias steers the choice but not the weight.
  std::vector<float> bias(kExperts, 0.0f);
  bias[7] = 10.0f;
  cpu::router({ids.data(), w.data(), logits.data(), bias.data(), 1, kExperts, 1, 1, 2, 1.0f, false});
  CHECK(ids == std::vector<int32_t>{7, 0});
  CHECK(w[0] == Approx(sigmoid(-1.0f)));
}

TEST_CASE("MoE with every expert selected at weight 1 equals the dense sum over experts") {
  const auto x = test::random_vector(kTokens * kHidden, 51);
  const auto w_gate_up = test::random_vector(kExperts * 2 * kInter * kHidden, 52, -0.1f, 0.1f);
  const auto w_down = test::random_vector(kExperts * kHidden * kInter, 53, -0.1f, 0.1f);
  std::vector<int32_t> ids;
  for (int32_t t = 0; t < kTokens; ++t) {
    for (int32_t e = 0; e < kExperts; ++e)
      ids.push_back((e * 3 + t) % kExperts);  // every expert, shuffled order
  }
  const std::vector<float> ones(ids.size(), 1.0f);
  std::vector<float> out(kTokens * kHidden), dense(kTokens * kHidden, 0.0f);
  cpu::moe_experts({out.data(), x.data(), ids.data(), ones.data(), w_gate_up.data(), w_down.data(),
                    DType::kF32, kTokens, kExperts, kHidden, kInter, 0, kExperts});
  for (int32_t e = 0; e < kExperts; ++e) {
    const auto y =
        expert_forward(x, w_gate_up.data() + e * 2 * kInter * kHidden, w_down.data() + e * kHidden * kInter);
    for (size_t i = 0; i < y.size(); ++i) dense[i] += y[i];
  }
  const double err = test::nmse(out, dense);
  INFO("NMSE " << err);
  CHECK(err < 1e-12);
}

TEST_CASE("routed MoE (top-2 of 8) equals the weighted sum of each token's chosen experts") {
  const auto x = test::random_vector(kTokens * kHidden, 54);
  const auto w_gate_up = test::to_bf16(test::random_vector(kExperts * 2 * kInter * kHidden, 55, -0.1f, 0.1f));
  const auto w_down = test::to_bf16(test::random_vector(kExperts * kHidden * kInter, 56, -0.1f, 0.1f));
  const auto logits = test::random_vector(kTokens * kExperts, 57, -3.0f, 3.0f);
  std::vector<int32_t> ids(kTokens * 2);
  std::vector<float> weights(kTokens * 2), out(kTokens * kHidden);
  cpu::router({ids.data(), weights.data(), logits.data(), nullptr, kTokens, kExperts, 4, 2, 2, 2.5f, true});
  cpu::moe_experts({out.data(), x.data(), ids.data(), weights.data(), w_gate_up.data(), w_down.data(),
                    DType::kBF16, kTokens, 2, kHidden, kInter, 0, kExperts});
  std::vector<float> want(kTokens * kHidden, 0.0f);
  for (int32_t e = 0; e < kExperts; ++e) {
    std::vector<float> gu(2 * kInter * kHidden), dn(kHidden * kInter);
    for (size_t i = 0; i < gu.size(); ++i) gu[i] = bf16_to_float(w_gate_up[e * gu.size() + i]);
    for (size_t i = 0; i < dn.size(); ++i) dn[i] = bf16_to_float(w_down[e * dn.size() + i]);
    const auto y = expert_forward(x, gu.data(), dn.data());
    for (int32_t t = 0; t < kTokens; ++t) {
      for (int32_t k = 0; k < 2; ++k) {
        if (ids[t * 2 + k] != e) continue;
        for (int32_t i = 0; i < kHidden; ++i)
          want[t * kHidden + i] += weights[t * 2 + k] * y[t * kHidden + i];
      }
    }
  }
  CHECK(test::nmse(out, want) < 1e-12);
}

TEST_CASE(
    "MoE with FP8 experts and 128x128 block scales equals F32 experts holding the dequantized weights") {
  const int32_t hidden = 256, inter = 128;  // two scale blocks along each axis
  const auto x = test::random_vector(kTokens * hidden, 58);
  const auto gu = test::random_vector(kExperts * 2 * inter * hidden, 59, -0.1f, 0.1f);
  const auto dn = test::random_vector(kExperts * hidden * inter, 60, -0.1f, 0.1f);
  const int64_t gu_scales = weight_scale_count(2 * inter, hidden),
                dn_scales = weight_scale_count(hidden, inter);
  const auto gu_scale = test::random_vector(kExperts * gu_scales, 61, 1e-4f, 1e-3f);
  const auto dn_scale = test::random_vector(kExperts * dn_scales, 62, 1e-4f, 1e-3f);
  // Quantize expert e's [rows, cols] weight with its block scales; keep the dequantized copy.
  auto quantize = [](const std::vector<float>& w, const std::vector<float>& scale, int32_t rows, int32_t cols,
                     int64_t per_expert, std::vector<uint8_t>& q, std::vector<float>& deq) {
    const int32_t scale_cols = (cols + 127) / 128;
    for (size_t i = 0; i < w.size(); ++i) {
      const int64_t e = static_cast<int64_t>(i) / (static_cast<int64_t>(rows) * cols), r = (i / cols) % rows,
                    c = i % cols;
      const float s = scale[e * per_expert + (r / 128) * scale_cols + c / 128];
      q.push_back(float_to_fp8e4m3(w[i] / s));
      deq.push_back(fp8e4m3_to_float(q.back()) * s);
    }
  };
  std::vector<uint8_t> gu_q, dn_q;
  std::vector<float> gu_deq, dn_deq;
  quantize(gu, gu_scale, 2 * inter, hidden, gu_scales, gu_q, gu_deq);
  quantize(dn, dn_scale, hidden, inter, dn_scales, dn_q, dn_deq);
  const auto logits = test::random_vector(kTokens * kExperts, 63, -3.0f, 3.0f);
  std::vector<int32_t> ids(kTokens * 2);
  std::vector<float> weights(kTokens * 2), fp8(kTokens * hidden), f32(kTokens * hidden);
  cpu::router({ids.data(), weights.data(), logits.data(), nullptr, kTokens, kExperts, 4, 2, 2, 2.5f, true});
  cpu::moe_experts({fp8.data(), x.data(), ids.data(), weights.data(), gu_q.data(), dn_q.data(),
                    DType::kF8E4M3, kTokens, 2, hidden, inter, 0, kExperts, gu_scale.data(),
                    dn_scale.data()});
  cpu::moe_experts({f32.data(), x.data(), ids.data(), weights.data(), gu_deq.data(), dn_deq.data(),
                    DType::kF32, kTokens, 2, hidden, inter, 0, kExperts});
  CHECK(test::nmse(fp8, f32) < 1e-12);
  CHECK(test::nmse(fp8, std::vector<float>(fp8.size(), 0.0f)) > 0.5);  // a real, non-zero output
}
