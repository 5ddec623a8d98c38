// CUDA MoE: the group-limited sigmoid router (one thread per token) and the grouped SwiGLU experts
// (deterministic bucketing, per-expert tiled GEMMs over contiguous row ranges, combine in (token, k) order).
#include <vector>

#include "kernels/cuda/device_memory.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace tokenline::cuda {
namespace {

constexpr int kMaxExperts = 512;  // GLM-5.3 / DeepSeek-V3 route over 256; local arrays are sized for 512
constexpr int kMaxGroups = 64;

// Index of the largest value among entries not yet taken (ties: lower index), or -1.
__device__ int argmax_untaken(const float* v, const bool* taken, int n) {
  int best = -1;
  for (int i = 0; i < n; ++i) {
    if (!taken[i] && (best < 0 || v[i] > v[best])) best = i;
  }
  return best;
}

__global__ void router_kernel(RouterParams p) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t >= p.n_tokens) return;
  float s[kMaxExperts], biased[kMaxExperts], group_score[kMaxGroups];
  bool taken[kMaxExperts], group_taken[kMaxGroups];
  const int group_size = p.n_experts / p.n_group;
  for (int e = 0; e < p.n_experts; ++e) {
    s[e] = 1.0f / (1.0f + expf(-p.logits[t * p.n_experts + e]));
    biased[e] = s[e] + (p.correction_bias != nullptr ? p.correction_bias[e] : 0.0f);
    taken[e] = false;
  }
  for (int g = 0; g < p.n_group; ++g) {
    const int first = argmax_untaken(biased + g * group_size, taken + g * group_size, group_size);
    float sum = 0.0f + biased[g * group_size + first];
    if (group_size > 1) {
      taken[g * group_size + first] = true;
      sum += biased[g * group_size +
                    argmax_untaken(biased + g * group_size, taken + g * group_size, group_size)];
      taken[g * group_size + first] = false;
    }
    group_score[g] = sum;
    group_taken[g] = false;
  }
  for (int i = 0; i < p.topk_group; ++i)
    group_taken[argmax_untaken(group_score, group_taken, p.n_group)] = true;
  for (int e = 0; e < p.n_experts; ++e) biased[e] = group_taken[e / group_size] ? biased[e] : -INFINITY;
  float total = 0.0f;
  for (int k = 0; k < p.topk; ++k) {
    const int e = argmax_untaken(biased, taken, p.n_experts);
    taken[e] = true;
    p.expert_ids[t * p.topk + k] = e;
    total += s[e];
  }
  for (int k = 0; k < p.topk; ++k) {
    const float se = s[p.expert_ids[t * p.topk + k]];
    p.weights[t * p.topk + k] = (p.normalize && total > 0.0f ? se / total : se) * p.routed_scaling_factor;
  }
}

// Single thread: stable counting sort of (token, k) slots by local expert, so the layout is deterministic.
// counts[n_local], row_slot[slots] (bucketed row -> slot), slot_row[slots] (slot -> row or -1).
__global__ void bucket_kernel(MoeExpertsParams p, int* counts, int* row_slot, int* slot_row) {
  const long long slots = static_cast<long long>(p.n_tokens) * p.topk;
  for (int e = 0; e < p.n_local_experts; ++e) counts[e] = 0;
  for (long long i = 0; i < slots; ++i) {
    const int local = p.expert_ids[i] - p.expert_begin;
    if (local >= 0 && local < p.n_local_experts) ++counts[local];
  }
  int offset = 0;
  for (int e = 0; e < p.n_local_experts; ++e) {
    const int n = counts[e];
    counts[e] = offset;  // becomes the fill cursor
    offset += n;
  }
  for (long long i = 0; i < slots; ++i) {
    const int local = p.expert_ids[i] - p.expert_begin;
    const bool here = local >= 0 && local < p.n_local_experts;
    slot_row[i] = here ? counts[local] : -1;
    if (here) row_slot[counts[local]++] = static_cast<int>(i);
  }
}

__global__ void gather_kernel(float* xg, const float* x, const int* row_slot, int rows, int topk,
                              int hidden) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<long long>(rows) * hidden) return;
  const long long r = idx / hidden, i = idx % hidden;
  xg[idx] = x[(row_slot[r] / topk) * static_cast<long long>(hidden) + i];
}

__global__ void combine_kernel(MoeExpertsParams p, const float* y, const int* slot_row) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<long long>(p.n_tokens) * p.hidden) return;
  const long long t = idx / p.hidden, i = idx % p.hidden;
  float acc = 0.0f;
  for (int k = 0; k < p.topk; ++k) {
    const int row = slot_row[t * p.topk + k];
    if (row >= 0) acc += p.weights[t * p.topk + k] * y[static_cast<long long>(row) * p.hidden + i];
  }
  p.out[idx] = acc;
}

}  // namespace

void router(RouterParams p) {
  if (p.n_tokens == 0) return;
  if (p.n_experts > kMaxExperts || p.n_group > kMaxGroups) {
    std::fprintf(stderr, "cuda::router: n_experts %d > %d or n_group %d > %d\n", p.n_experts, kMaxExperts,
                 p.n_group, kMaxGroups);
    std::abort();
  }
  router_kernel<<<blocks_for(p.n_tokens, 64), 64>>>(p);
  TL_CUDA_LAUNCHED();
}

void moe_experts(MoeExpertsParams p) {
  const long long slots = static_cast<long long>(p.n_tokens) * p.topk;
  if (slots == 0) return;
  DeviceArray<int> offsets(p.n_local_experts), row_slot(slots), slot_row(slots);
  bucket_kernel<<<1, 1>>>(p, offsets.get(), row_slot.get(), slot_row.get());
  TL_CUDA_LAUNCHED();
  const std::vector<int> ends = offsets.to_host();  // after the fill, offsets[e] is expert e's end row
  const int rows = p.n_local_experts > 0 ? ends.back() : 0;
  DeviceArray<float> xg(static_cast<long long>(rows) * p.hidden),
      gate_up(static_cast<long long>(rows) * 2 * p.inter);
  DeviceArray<float> act(static_cast<long long>(rows) * p.inter), y(static_cast<long long>(rows) * p.hidden);
  if (rows > 0) {
    gather_kernel<<<blocks_for(static_cast<long long>(rows) * p.hidden), kThreads>>>(
        xg.get(), p.x, row_slot.get(), rows, p.topk, p.hidden);
    TL_CUDA_LAUNCHED();
  }
  const long long elem = dtype_bytes(p.w_dtype);
  for (int e = 0, begin = 0; e < p.n_local_experts; begin = ends[e], ++e) {
    const int n = ends[e] - begin;
    if (n == 0) continue;
    const auto* gu_w = static_cast<const uint8_t*>(p.w_gate_up) + e * 2LL * p.inter * p.hidden * elem;
    const auto* dn_w =
        static_cast<const uint8_t*>(p.w_down) + e * static_cast<long long>(p.hidden) * p.inter * elem;
    float* gu = gate_up.get() + static_cast<long long>(begin) * 2 * p.inter;
    float* a = act.get() + static_cast<long long>(begin) * p.inter;
    const float* gu_scale =
        p.w_gate_up_scale ? p.w_gate_up_scale + e * weight_scale_count(2 * p.inter, p.hidden) : nullptr;
    const float* dn_scale =
        p.w_down_scale ? p.w_down_scale + e * weight_scale_count(p.hidden, p.inter) : nullptr;
    gemm({gu, xg.get() + static_cast<long long>(begin) * p.hidden, gu_w, gu_scale, p.w_dtype, n, 2 * p.inter,
          p.hidden, false});
    silu_mul({a, gu, n, p.inter});
    gemm({y.get() + static_cast<long long>(begin) * p.hidden, a, dn_w, dn_scale, p.w_dtype, n, p.hidden,
          p.inter, false});
  }
  combine_kernel<<<blocks_for(static_cast<long long>(p.n_tokens) * p.hidden), kThreads>>>(p, y.get(),
                                                                                          slot_row.get());
  TL_CUDA_LAUNCHED();
  device_synchronize();  // the scratch arrays are freed on return
}

}  // namespace tokenline::cuda
