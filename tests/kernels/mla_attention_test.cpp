#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {

constexpr int32_t kHeads = 4, kKvLora = 128, kRope = 16, kNope = 32, kV = 24, kPageSize = 8;
const std::vector<int32_t> kLens = {37, 20};  // tokens per sequence

// Every token of every sequence, its latent and rope key, written into a cache through a page table.
struct Context {
  std::vector<int32_t> seq, pos;
  std::vector<float> kv_a;  // [tokens, kKvLora + kRope]
  Context() {
    for (int32_t b = 0; b < static_cast<int32_t>(kLens.size()); ++b) {
      for (int32_t p = 0; p < kLens[b]; ++p) seq.push_back(b), pos.push_back(p);
    }
    kv_a = test::random_vector(static_cast<int64_t>(seq.size()) * (kKvLora + kRope), 21, -2.0f, 2.0f);
  }
  int32_t tokens() const { return static_cast<int32_t>(seq.size()); }
  std::vector<uint8_t> write(const test::PageTableHost& table, KvLayout layout) const {
    std::vector<uint8_t> cache(static_cast<size_t>(table.num_pages) * kPageSize *
                               kv_token_bytes(layout, kKvLora, kRope));
    cpu::kv_write({cache.data(), kv_a.data(), kv_a.data() + kKvLora, seq.data(), pos.data(), table.view(),
                   layout, tokens(), kKvLora + kRope, kKvLora, kRope});
    return cache;
  }
};

// Queries: the last three tokens of sequence 0 and the last two of sequence 1.
struct Queries {
  std::vector<int32_t> seq = {0, 0, 0, 1, 1}, pos = {34, 35, 36, 18, 19};
  std::vector<float> q_latent = test::random_vector(5 * kHeads * kKvLora, 22);
  std::vector<float> q_rope = test::random_vector(5 * kHeads * kRope, 23);
  int32_t tokens() const { return 5; }
};

std::vector<float> attend(const Queries& q, const std::vector<uint8_t>& cache,
                          const test::PageTableHost& table, KvLayout layout, const int32_t* topk = nullptr,
                          int32_t k = 0) {
  std::vector<float> out(static_cast<size_t>(q.tokens()) * kHeads * kKvLora);
  MlaAttentionParams p{out.data(),
                       q.q_latent.data(),
                       q.q_rope.data(),
                       cache.data(),
                       q.seq.data(),
                       q.pos.data(),
                       topk,
                       table.view(),
                       layout,
                       q.tokens(),
                       kHeads,
                       kKvLora,
                       kRope,
                       kRope,
                       k,
                       1.0f / std::sqrt(static_cast<float>(kNope + kRope))};
  if (topk != nullptr) {
    cpu::mla_attention_sparse(p);
  } else {
    cpu::mla_attention_dense(p);
  }
  return out;
}

}  // namespace

TEST_CASE("paged KV: scattered pages through the CSR table equal contiguous pages, both layouts") {
  const Context ctx;
  const Queries q;
  const auto contiguous = test::make_page_table(kLens, kPageSize, false);
  const auto scattered = test::make_page_table(kLens, kPageSize, true);
  REQUIRE(contiguous.indices != scattered.indices);
  for (KvLayout layout : {KvLayout::kBf16, KvLayout::kFp8DsMla}) {
    const auto a = attend(q, ctx.write(contiguous, layout), contiguous, layout);
    const auto b = attend(q, ctx.write(scattered, layout), scattered, layout);
    CHECK(a == b);
  }
}

TEST_CASE("sparse MLA with top-k >= context equals dense MLA") {
  const Context ctx;
  const Queries q;
  const auto table = test::make_page_table(kLens, kPageSize, true);
  const auto cache = ctx.write(table, KvLayout::kFp8DsMla);
  const int32_t k = 40;  // >= the longest context (37)
  std::vector<int32_t> topk(static_cast<size_t>(q.tokens()) * k, -1);
  for (int32_t t = 0; t < q.tokens(); ++t) {
    for (int32_t i = 0; i <= q.pos[t]; ++i) topk[t * k + i] = q.pos[t] - i;  // reversed order on purpose
  }
  const auto dense = attend(q, cache, table, KvLayout::kFp8DsMla);
  const auto sparse = attend(q, cache, table, KvLayout::kFp8DsMla, topk.data(), k);
  CHECK(test::nmse(sparse, dense) < 1e-12);

  // A real subset differs from dense: keep only the 4 most recent positions.
  std::vector<int32_t> small(static_cast<size_t>(q.tokens()) * 4);
  for (int32_t t = 0; t < q.tokens(); ++t) {
    for (int32_t i = 0; i < 4; ++i) small[t * 4 + i] = q.pos[t] - i;
  }
  CHECK(test::nmse(attend(q, cache, table, KvLayout::kFp8DsMla, small.data(), 4), dense) > 1e-6);
}

TEST_CASE("fp8_ds_mla: 656 bytes per token at 512/64, round trip within FP8's bound") {
  CHECK(kv_token_bytes(KvLayout::kFp8DsMla, 512, 64) == 656);
  CHECK(kv_token_bytes(KvLayout::kBf16, 512, 64) == 1152);
  const Context ctx;
  const auto table = test::make_page_table(kLens, kPageSize, true);
  const auto cache = ctx.write(table, KvLayout::kFp8DsMla);
  const int32_t bytes = kv_token_bytes(KvLayout::kFp8DsMla, kKvLora, kRope);
  std::vector<float> got, want;
  for (int32_t t = 0; t < ctx.tokens(); ++t) {
    std::vector<float> latent(kKvLora), rope(kRope);
    kv_load_token(latent.data(), rope.data(),
                  cache.data() + kv_slot(table.view(), ctx.seq[t], ctx.pos[t]) * bytes, KvLayout::kFp8DsMla,
                  kKvLora, kRope);
    const float* src = ctx.kv_a.data() + static_cast<int64_t>(t) * (kKvLora + kRope);
    float amax = 0.0f;
    for (int32_t i = 0; i < kKvLora; ++i) amax = std::max(amax, std::fabs(src[i]));
    const float scale = amax / kFp8E4m3Max;
    for (int32_t i = 0; i < kKvLora; ++i) {
      // Half a mantissa step (2^-4 relative) for normals, half a subnormal step (2^-10 * scale) below.
      const float bound = std::max(std::fabs(src[i]) * 0.0625f, scale * 0.0009765625f) * 1.0001f;
      REQUIRE(std::fabs(latent[i] - src[i]) <= bound);
    }
    for (int32_t i = 0; i < kRope; ++i) REQUIRE(rope[i] == bf16_to_float(float_to_bf16(src[kKvLora + i])));
    got.insert(got.end(), latent.begin(), latent.end());
    want.insert(want.end(), src, src + kKvLora);
  }
  const double err = test::nmse(got, want);
  INFO("fp8_ds_mla latent NMSE " << err);
  CHECK(err < 1e-3);  // e4m3 with 3 mantissa bits: uniform rounding gives roughly 2^-8 / 3 relative MSE
  CHECK(err > 1e-7);  // it is really quantized
}

TEST_CASE("absorbed MLA (q W_UK, latent attention, W_UV) equals explicit multi-head attention") {
  const Context ctx;
  const auto table = test::make_page_table(kLens, kPageSize, true);
  const auto cache = ctx.write(table, KvLayout::kBf16);
  Queries q;
  const auto q_full = test::random_vector(q.tokens() * kHeads * (kNope + kRope), 24);
  const auto w_kv_b = test::random_vector(kHeads * (kNope + kV) * kKvLora, 25, -0.2f, 0.2f);
  cpu::mla_absorb_q({q.q_latent.data(), q_full.data(), w_kv_b.data(), DType::kF32, q.tokens(), kHeads, kNope,
                     kRope, kV, kKvLora});
  std::vector<float> out(q.tokens() * kHeads * kKvLora), absorbed(q.tokens() * kHeads * kV);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kNope + kRope));
  cpu::mla_attention_dense({out.data(), q.q_latent.data(), q_full.data() + kNope, cache.data(), q.seq.data(),
                            q.pos.data(), nullptr, table.view(), KvLayout::kBf16, q.tokens(), kHeads, kKvLora,
                            kRope, kNope + kRope, 0, scale});
  cpu::mla_absorb_out(
      {absorbed.data(), out.data(), w_kv_b.data(), DType::kF32, q.tokens(), kHeads, kNope, kV, kKvLora});

  std::vector<float> explicit_out(absorbed.size());
  const int32_t bytes = kv_token_bytes(KvLayout::kBf16, kKvLora, kRope);
  for (int32_t t = 0; t < q.tokens(); ++t) {
    for (int32_t h = 0; h < kHeads; ++h) {
      const float* qh = q_full.data() + (t * kHeads + h) * (kNope + kRope);
      std::vector<double> scores, acc(kV, 0.0);
      std::vector<std::vector<double>> values;
      for (int32_t s = 0; s <= q.pos[t]; ++s) {
        std::vector<float> latent(kKvLora), rope(kRope);
        kv_load_token(latent.data(), rope.data(), cache.data() + kv_slot(table.view(), q.seq[t], s) * bytes,
                      KvLayout::kBf16, kKvLora, kRope);
        std::vector<double> k(kNope, 0.0), v(kV, 0.0);
        for (int32_t d = 0; d < kNope + kV; ++d) {
          double sum = 0.0;
          for (int32_t c = 0; c < kKvLora; ++c)
            sum += w_kv_b[(h * (kNope + kV) + d) * kKvLora + c] * latent[c];
          (d < kNope ? k[d] : v[d - kNope]) = sum;
        }
        double dot = 0.0;
        for (int32_t d = 0; d < kNope; ++d) dot += qh[d] * k[d];
        for (int32_t d = 0; d < kRope; ++d) dot += qh[kNope + d] * rope[d];
        scores.push_back(dot * scale);
        values.push_back(v);
      }
      const double mx = *std::max_element(scores.begin(), scores.end());
      double denom = 0.0;
      for (size_t s = 0; s < scores.size(); ++s) {
        const double w = std::exp(scores[s] - mx);
        denom += w;
        for (int32_t d = 0; d < kV; ++d) acc[d] += w * values[s][d];
      }
      for (int32_t d = 0; d < kV; ++d)
        explicit_out[(t * kHeads + h) * kV + d] = static_cast<float>(acc[d] / denom);
    }
  }
  const double err = test::nmse(absorbed, explicit_out);
  INFO("absorbed vs explicit NMSE " << err);
  CHECK(err < 1e-9);
}
