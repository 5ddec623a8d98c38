// CPU DSA lightning indexer (ReLU-weighted sum of per-head dot products) and the top-k selection that
// feeds sparse MLA.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {

void indexer_score(IndexerScoreParams p) {
  parallel_for(p.n_tokens, 1, [&](int64_t t) {
    float* out = p.out + t * p.max_context;
    std::vector<float> k(static_cast<size_t>(p.head_dim));
    for (int32_t s = 0; s < p.max_context; ++s) {
      if (s > p.token_pos[t]) {
        out[s] = -std::numeric_limits<float>::infinity();
        continue;
      }
      const uint8_t* src = p.k_cache + kv_slot(p.table, p.token_seq[t], s) * p.head_dim * 2;
      for (int32_t i = 0; i < p.head_dim; ++i) {
        uint16_t b;
        std::memcpy(&b, src + 2 * i, sizeof b);
        k[static_cast<size_t>(i)] = bf16_to_float(b);
      }
      double total = 0.0;
      for (int32_t h = 0; h < p.n_heads; ++h) {
        const float* q = p.q + (t * p.n_heads + h) * p.head_dim;
        double dot = 0.0;
        for (int32_t i = 0; i < p.head_dim; ++i) dot += static_cast<double>(q[i]) * k[static_cast<size_t>(i)];
        total += p.head_weights[t * p.n_heads + h] * std::max(dot, 0.0);
      }
      out[s] = static_cast<float>(total);
    }
  });
}

void topk_select(TopkParams p) {
  parallel_for(p.n_tokens, 4, [&](int64_t t) {
    const float* scores = p.scores + t * p.max_context;
    const int32_t len = std::min(p.token_pos[t] + 1, p.max_context);
    std::vector<int32_t> order(static_cast<size_t>(len));
    std::iota(order.begin(), order.end(), 0);
    const auto keep = static_cast<size_t>(std::min(len, p.k));
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
        [&](int32_t a, int32_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
    for (int32_t i = 0; i < p.k; ++i)
      p.out[t * p.k + i] = static_cast<size_t>(i) < keep ? order[static_cast<size_t>(i)] : -1;
  });
}

}  // namespace tokenline::cpu
