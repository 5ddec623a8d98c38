#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {
constexpr int32_t kHidden = 256;
constexpr int32_t kTokens = 5;
constexpr float kEps = 1e-6f;
}  // namespace

TEST_CASE("embedding: rows by id, zeros outside a vocab shard, bf16 table widens exactly") {
  const int32_t vocab = 32;
  const auto table = test::random_vector(vocab * kHidden, 1);
  const auto table_bf16 = test::to_bf16(table);
  const std::vector<int32_t> ids = {3, 31, 0, 17, 3};
  std::vector<float> out(kTokens * kHidden), shard(kTokens * kHidden);
  cpu::embedding({out.data(), table_bf16.data(), ids.data(), DType::kBF16, kTokens, kHidden, 0, vocab});
  for (int32_t t = 0; t < kTokens; ++t) {
    for (int32_t i = 0; i < kHidden; ++i)
      REQUIRE(out[t * kHidden + i] == bf16_to_float(table_bf16[ids[t] * kHidden + i]));
  }
  // Shard holding rows [16, 32): token 17 and 31 present, others zero.
  cpu::embedding(
      {shard.data(), table.data() + 16 * kHidden, ids.data(), DType::kF32, kTokens, kHidden, 16, 16});
  CHECK(shard[1 * kHidden + 5] == table[31 * kHidden + 5]);
  CHECK(shard[3 * kHidden + 7] == table[17 * kHidden + 7]);
  CHECK(shard[0 * kHidden + 5] == 0.0f);
}

TEST_CASE("rmsnorm: unit RMS after weight 1, residual add updates the residual stream") {
  const auto x = test::random_vector(kTokens * kHidden, 2);
  auto residual = test::random_vector(kTokens * kHidden, 3);
  const auto residual_before = residual;
  std::vector<float> ones(kHidden, 1.0f), out(kTokens * kHidden);
  cpu::rmsnorm(
      {out.data(), residual.data(), x.data(), ones.data(), kTokens, kHidden, kHidden, kHidden, kEps});
  for (int32_t t = 0; t < kTokens; ++t) {
    double sum_sq = 0.0;
    for (int32_t i = 0; i < kHidden; ++i) {
      REQUIRE(residual[t * kHidden + i] == residual_before[t * kHidden + i] + x[t * kHidden + i]);
      sum_sq += out[t * kHidden + i] * out[t * kHidden + i];
    }
    CHECK(std::sqrt(sum_sq / kHidden) == Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE("rope: q.k after rotation depends only on the position difference") {
  const int32_t rope_dim = 16, heads = 2, stride = 24, offset = 8;
  const auto q0 = test::random_vector(heads * stride, 4);
  const auto k0 = test::random_vector(heads * stride, 5);
  auto rotated_dot = [&](int32_t pq, int32_t pk) {
    auto q = q0, k = k0;
    cpu::rope({q.data(), &pq, 1, heads, stride, offset, rope_dim, 10000.0f});
    cpu::rope({k.data(), &pk, 1, heads, stride, offset, rope_dim, 10000.0f});
    for (int32_t i = 0; i < offset; ++i) REQUIRE(q[i] == q0[i]);  // nope part untouched
    double dot = 0.0;
    for (int32_t i = offset; i < offset + rope_dim; ++i) dot += q[i] * k[i];
    return dot;
  };
  CHECK(rotated_dot(10, 3) == Approx(rotated_dot(107, 100)).epsilon(1e-4));
  CHECK(rotated_dot(0, 0) == Approx(rotated_dot(55, 55)).epsilon(1e-4));
  CHECK(std::fabs(rotated_dot(10, 3) - rotated_dot(3, 3)) > 1e-3);  // rotation actually happened
}

TEST_CASE("silu_mul and mtp_input match their definitions") {
  const int32_t inter = 64;
  const auto gate_up = test::random_vector(kTokens * 2 * inter, 6, -4.0f, 4.0f);
  std::vector<float> act(kTokens * inter);
  cpu::silu_mul({act.data(), gate_up.data(), kTokens, inter});
  const float g = gate_up[2 * inter + 3], u = gate_up[2 * inter + inter + 3];
  CHECK(act[inter + 3] == Approx(g / (1.0f + std::exp(-g)) * u));

  const auto emb = test::random_vector(kTokens * kHidden, 7);
  const auto hidden = test::random_vector(kTokens * kHidden, 8);
  const auto enorm = test::random_vector(kHidden, 9, 0.5f, 1.5f);
  const auto hnorm = test::random_vector(kHidden, 10, 0.5f, 1.5f);
  std::vector<float> out(kTokens * 2 * kHidden), e(kTokens * kHidden), h(kTokens * kHidden);
  cpu::mtp_input({out.data(), emb.data(), hidden.data(), enorm.data(), hnorm.data(), kTokens, kHidden, kEps});
  cpu::rmsnorm({e.data(), nullptr, emb.data(), enorm.data(), kTokens, kHidden, kHidden, kHidden, kEps});
  cpu::rmsnorm({h.data(), nullptr, hidden.data(), hnorm.data(), kTokens, kHidden, kHidden, kHidden, kEps});
  for (int32_t t = 0; t < kTokens; ++t) {
    for (int32_t i = 0; i < kHidden; ++i) {
      REQUIRE(out[t * 2 * kHidden + i] == e[t * kHidden + i]);
      REQUIRE(out[t * 2 * kHidden + kHidden + i] == h[t * kHidden + i]);
    }
  }
}

TEST_CASE("scale_add: out = a * out + b * x, and a plain scale without x") {
  const auto x = test::random_vector(kTokens * kHidden, 12);
  const auto out0 = test::random_vector(kTokens * kHidden, 13);
  std::vector<float> out = out0, scaled = out0;
  const auto n = static_cast<int64_t>(out.size());
  cpu::scale_add({out.data(), x.data(), n, 0.5f, -2.0f});
  cpu::scale_add({scaled.data(), nullptr, n, 3.0f, 1.0f});
  for (size_t i = 0; i < out.size(); ++i) {
    REQUIRE(out[i] == 0.5f * out0[i] + -2.0f * x[i]);
    REQUIRE(scaled[i] == 3.0f * out0[i]);
  }
}

TEST_CASE("layernorm: zero mean and unit variance before the affine part, bias added") {
  const auto x = test::random_vector(kTokens * kHidden, 11, -3.0f, 5.0f);
  const std::vector<float> ones(kHidden, 1.0f), zeros(kHidden, 0.0f), bias(kHidden, 0.25f);
  std::vector<float> out(x.size()), shifted(x.size());
  cpu::layernorm({out.data(), x.data(), ones.data(), zeros.data(), kTokens, kHidden, kEps});
  cpu::layernorm({shifted.data(), x.data(), ones.data(), bias.data(), kTokens, kHidden, kEps});
  for (int32_t t = 0; t < kTokens; ++t) {
    double mean = 0.0, var = 0.0;
    for (int32_t i = 0; i < kHidden; ++i) mean += out[t * kHidden + i] / kHidden;
    for (int32_t i = 0; i < kHidden; ++i)
      var += (out[t * kHidden + i] - mean) * (out[t * kHidden + i] - mean) / kHidden;
    CHECK(mean == Approx(0.0).margin(1e-5));
    CHECK(var == Approx(1.0).epsilon(1e-4));
    CHECK(shifted[t * kHidden + 3] == Approx(out[t * kHidden + 3] + 0.25f));
  }
}

TEST_CASE("rope: an explicit frequency table (YaRN) replaces theta, the theta table reproduces the default") {
  const int32_t rope_dim = 16, pos = 1234;
  const auto x0 = test::random_vector(rope_dim, 12);
  std::vector<float> table(rope_dim / 2), scaled(rope_dim / 2);
  for (int32_t i = 0; i < rope_dim / 2; ++i) {
    table[i] = static_cast<float>(std::pow(10000.0, -2.0 * i / rope_dim));
    scaled[i] = table[i] / 40.0f;  // YaRN-style interpolation of the low frequencies
  }
  auto rotate = [&](const float* inv_freq) {
    auto x = x0;
    cpu::rope({x.data(), &pos, 1, 1, rope_dim, 0, rope_dim, 10000.0f, inv_freq});
    return x;
  };
  // The table holds floats: relative rounding 2^-24 times an angle of ~1234 rad leaves ~1e-4 rad of phase.
  CHECK(test::nmse(rotate(table.data()), rotate(nullptr)) < 1e-7);
  CHECK(test::nmse(rotate(scaled.data()), rotate(nullptr)) > 1e-3);
}
