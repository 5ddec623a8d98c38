#include <catch2/catch.hpp>
#include <cmath>

#include "kernels/cpu/kernels.h"
#include "tests/kernels/test_util.h"

using namespace tokenline;

namespace {
constexpr int32_t kIdxHeads = 32, kIdxDim = 128, kPageSize = 4;  // DeepSeek-V3.2's indexer shape
}  // namespace

TEST_CASE("indexer score: ReLU-weighted sum over heads of q.k, -inf beyond the causal position") {
  const std::vector<int32_t> lens = {13, 6};
  const auto table = test::make_page_table(lens, kPageSize, true);
  std::vector<int32_t> seq, pos;
  for (int32_t b = 0; b < 2; ++b) {
    for (int32_t p = 0; p < lens[b]; ++p) seq.push_back(b), pos.push_back(p);
  }
  const auto n = static_cast<int32_t>(seq.size());
  const auto k = test::random_vector(n * kIdxDim, 31);
  std::vector<uint8_t> k_cache(static_cast<size_t>(table.num_pages) * kPageSize * kIdxDim * 2);
  cpu::index_k_write({k_cache.data(), k.data(), seq.data(), pos.data(), table.view(), n, kIdxDim});

  const std::vector<int32_t> q_seq = {0, 1}, q_pos = {12, 3};
  const int32_t max_ctx = 13;
  const auto q = test::random_vector(2 * kIdxHeads * kIdxDim, 32);
  const auto w = test::random_vector(2 * kIdxHeads, 33);
  std::vector<float> scores(2 * max_ctx);
  cpu::indexer_score({scores.data(), q.data(), w.data(), k_cache.data(), q_seq.data(), q_pos.data(),
                      table.view(), 2, kIdxHeads, kIdxDim, max_ctx});
  for (int32_t t = 0; t < 2; ++t) {
    const int32_t first_token = q_seq[t] == 0 ? 0 : lens[0];
    for (int32_t s = 0; s < max_ctx; ++s) {
      if (s > q_pos[t]) {
        CHECK(std::isinf(scores[t * max_ctx + s]));
        continue;
      }
      double want = 0.0;
      for (int32_t h = 0; h < kIdxHeads; ++h) {
        double dot = 0.0;
        for (int32_t i = 0; i < kIdxDim; ++i) {
          dot += q[(t * kIdxHeads + h) * kIdxDim + i] *
                 bf16_to_float(float_to_bf16(k[(first_token + s) * kIdxDim + i]));
        }
        want += w[t * kIdxHeads + h] * std::max(dot, 0.0);
      }
      CHECK(scores[t * max_ctx + s] == Approx(want).epsilon(1e-5).margin(1e-5));
    }
  }
}

TEST_CASE("topk_select: descending, ties to the lower position, causal, -1 padding") {
  const int32_t max_ctx = 6, k = 4;
  const std::vector<float> scores = {
      0.5f, 2.0f, 0.5f, 3.0f, 9.0f, 9.0f,   // token 0 at pos 3: 4 and 5 are future
      1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 7.0f};  // token 1 at pos 1: 2 candidates
  const std::vector<int32_t> pos = {3, 1};
  std::vector<int32_t> out(2 * k);
  cpu::topk_select({out.data(), scores.data(), pos.data(), 2, max_ctx, k});
  CHECK(out == std::vector<int32_t>{3, 1, 0, 2, 0, 1, -1, -1});
}
