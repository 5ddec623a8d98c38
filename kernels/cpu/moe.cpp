// CPU MoE: the DeepSeek-V3 group-limited sigmoid router and the grouped SwiGLU expert GEMM (tokens are
// bucketed per expert, each bucket runs gate_up GEMM -> SiLU*up -> down GEMM, outputs are scattered back).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parallel_for.h"

namespace tokenline::cpu {
namespace {

constexpr int32_t kGroupScoreExperts = 2;  // DeepSeek-V3 scores a group by the sum of its best two experts

// Indices of the k largest values (ties: lower index first), descending.
std::vector<int32_t> top_indices(const std::vector<float>& v, int32_t k) {
  std::vector<int32_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
  order.resize(static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(v.size()))));
  return order;
}

void route_token(const RouterParams& p, int64_t t) {
  const int32_t group_size = p.n_experts / p.n_group;
  std::vector<float> s(static_cast<size_t>(p.n_experts)), biased(s.size());
  for (int32_t e = 0; e < p.n_experts; ++e) {
    s[e] = 1.0f / (1.0f + std::exp(-p.logits[t * p.n_experts + e]));
    biased[e] = s[e] + (p.correction_bias != nullptr ? p.correction_bias[e] : 0.0f);
  }
  std::vector<float> group_score(static_cast<size_t>(p.n_group));
  for (int32_t g = 0; g < p.n_group; ++g) {
    std::vector<float> members(biased.begin() + g * group_size, biased.begin() + (g + 1) * group_size);
    float sum = 0.0f;
    for (int32_t i : top_indices(members, kGroupScoreExperts)) sum += members[i];
    group_score[g] = sum;
  }
  std::vector<float> allowed(biased.size(), -INFINITY);
  for (int32_t g : top_indices(group_score, p.topk_group)) {
    std::copy(biased.begin() + g * group_size, biased.begin() + (g + 1) * group_size,
              allowed.begin() + g * group_size);
  }
  const std::vector<int32_t> chosen = top_indices(allowed, p.topk);
  float total = 0.0f;
  for (int32_t e : chosen) total += s[e];
  for (int32_t i = 0; i < p.topk; ++i) {
    const int32_t e = chosen[i];
    p.expert_ids[t * p.topk + i] = e;
    const float w = p.normalize && total > 0.0f ? s[e] / total : s[e];
    p.weights[t * p.topk + i] = w * p.routed_scaling_factor;
  }
}

}  // namespace

void router(RouterParams p) {
  parallel_for(p.n_tokens, 16, [&](int64_t t) { route_token(p, t); });
}

void moe_experts(MoeExpertsParams p) {
  std::fill(p.out, p.out + static_cast<int64_t>(p.n_tokens) * p.hidden, 0.0f);
  std::vector<std::vector<int64_t>> buckets(
      static_cast<size_t>(p.n_local_experts));  // (t*topk + k) per expert
  for (int64_t i = 0; i < static_cast<int64_t>(p.n_tokens) * p.topk; ++i) {
    const int32_t local = p.expert_ids[i] - p.expert_begin;
    if (local >= 0 && local < p.n_local_experts) buckets[local].push_back(i);
  }
  const int64_t gate_up_elems = 2LL * p.inter * p.hidden,
                down_elems = static_cast<int64_t>(p.hidden) * p.inter;
  const int64_t elem_bytes = dtype_bytes(p.w_dtype);
  for (int32_t e = 0; e < p.n_local_experts; ++e) {
    const auto rows = static_cast<int32_t>(buckets[e].size());
    if (rows == 0) continue;
    std::vector<float> x(static_cast<size_t>(rows) * p.hidden),
        gate_up(static_cast<size_t>(rows) * 2 * p.inter);
    std::vector<float> act(static_cast<size_t>(rows) * p.inter), y(static_cast<size_t>(rows) * p.hidden);
    for (int32_t r = 0; r < rows; ++r) {
      const float* src = p.x + (buckets[e][r] / p.topk) * p.hidden;
      std::copy(src, src + p.hidden, x.begin() + static_cast<int64_t>(r) * p.hidden);
    }
    const auto* gu_w = static_cast<const uint8_t*>(p.w_gate_up) + e * gate_up_elems * elem_bytes;
    const auto* down_w = static_cast<const uint8_t*>(p.w_down) + e * down_elems * elem_bytes;
    const float* gu_scale =
        p.w_gate_up_scale ? p.w_gate_up_scale + e * weight_scale_count(2 * p.inter, p.hidden) : nullptr;
    const float* down_scale =
        p.w_down_scale ? p.w_down_scale + e * weight_scale_count(p.hidden, p.inter) : nullptr;
    gemm({gate_up.data(), x.data(), gu_w, gu_scale, p.w_dtype, rows, 2 * p.inter, p.hidden, false});
    silu_mul({act.data(), gate_up.data(), rows, p.inter});
    gemm({y.data(), act.data(), down_w, down_scale, p.w_dtype, rows, p.hidden, p.inter, false});
    for (int32_t r = 0; r < rows; ++r) {
      const int64_t slot = buckets[e][r];
      float* dst = p.out + (slot / p.topk) * p.hidden;
      for (int32_t i = 0; i < p.hidden; ++i)
        dst[i] += p.weights[slot] * y[static_cast<size_t>(r) * p.hidden + i];
    }
  }
}

}  // namespace tokenline::cpu
