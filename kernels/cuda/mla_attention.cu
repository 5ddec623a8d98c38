// CUDA MLA attention over the paged cache (one block per (token, head), online softmax over positions),
// the paged KV writers, the DSA indexer score and top-k selection.
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace tokenline::cuda {
namespace {

constexpr int kAttnThreads = 128;  // threads per (token, head) block
constexpr int kMaxSlice = 4;       // latent values per thread: kv_lora <= 128 * 4 = 512 (GLM-5.3 / V3.2)

__global__ void mla_attention_kernel(MlaAttentionParams p, bool sparse) {
  const long long row = blockIdx.x;
  const long long t = row / p.n_heads;
  const int seq = p.token_seq[t], last = p.token_pos[t];
  const long long bytes = kv_token_bytes(p.layout, p.kv_lora, p.rope_dim);
  const float* ql = p.q_latent + row * p.kv_lora;
  const float* qr = p.q_rope + row * p.q_rope_stride;
  float q[kMaxSlice], acc[kMaxSlice];
  for (int i = 0; i < kMaxSlice; ++i) {
    const int c = threadIdx.x + i * kAttnThreads;
    q[i] = c < p.kv_lora ? ql[c] : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  const int count = sparse ? p.topk : last + 1;
  for (int n = 0; n < count; ++n) {
    const int pos = sparse ? p.topk_indices[t * p.topk + n] : n;
    if (pos < 0 || pos > last) continue;  // uniform across the block: no divergence at block_sum
    const uint8_t* token = p.kv_cache + kv_slot(p.table, seq, pos) * bytes;
    float lat[kMaxSlice];
    float partial = 0.0f;
    for (int i = 0; i < kMaxSlice; ++i) {
      const int c = threadIdx.x + i * kAttnThreads;
      lat[i] = c < p.kv_lora ? kv_load_latent(token, p.layout, p.kv_lora, c) : 0.0f;
      partial += q[i] * lat[i];
    }
    for (int c = threadIdx.x; c < p.rope_dim; c += kAttnThreads)
      partial += qr[c] * kv_load_rope(token, p.layout, p.kv_lora, c);
    const float score = block_sum(partial) * p.softmax_scale;
    const float new_m = fmaxf(m, score);
    const float correction = expf(m - new_m), w = expf(score - new_m);
    l = l * correction + w;
    for (int i = 0; i < kMaxSlice; ++i) acc[i] = acc[i] * correction + w * lat[i];
    m = new_m;
  }
  for (int i = 0; i < kMaxSlice; ++i) {
    const int c = threadIdx.x + i * kAttnThreads;
    if (c < p.kv_lora) p.out[row * p.kv_lora + c] = l > 0.0f ? acc[i] / l : 0.0f;
  }
}

__global__ void kv_write_kernel(KvWriteParams p) {
  const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (t >= p.n_tokens) return;
  const long long bytes = kv_token_bytes(p.layout, p.kv_lora, p.rope_dim);
  uint8_t* dst = p.kv_cache + kv_slot(p.table, p.token_seq[t], p.token_pos[t]) * bytes;
  kv_store_token(dst, p.latent + t * p.row_stride, p.rope + t * p.row_stride, p.layout, p.kv_lora,
                 p.rope_dim);
}

__global__ void index_k_write_kernel(IndexKWriteParams p) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<long long>(p.n_tokens) * p.head_dim) return;
  const long long t = idx / p.head_dim, i = idx % p.head_dim;
  auto* dst = reinterpret_cast<uint16_t*>(p.k_cache +
                                          kv_slot(p.table, p.token_seq[t], p.token_pos[t]) * p.head_dim * 2);
  dst[i] = float_to_bf16(p.k[idx]);
}

__global__ void indexer_score_kernel(IndexerScoreParams p) {
  const long long t = blockIdx.y;
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= p.max_context) return;
  float* out = p.out + t * p.max_context;
  if (s > p.token_pos[t]) {
    out[s] = -INFINITY;
    return;
  }
  const auto* k =
      reinterpret_cast<const uint16_t*>(p.k_cache + kv_slot(p.table, p.token_seq[t], s) * p.head_dim * 2);
  float total = 0.0f;
  for (int h = 0; h < p.n_heads; ++h) {
    const float* q = p.q + (t * p.n_heads + h) * p.head_dim;
    float dot = 0.0f;
    for (int i = 0; i < p.head_dim; ++i) dot += q[i] * bf16_to_float(k[i]);
    total += p.head_weights[t * p.n_heads + h] * fmaxf(dot, 0.0f);
  }
  out[s] = total;
}

// Rank of each candidate = how many candidates beat it (higher score, or equal and lower position); the
// k best land at out[rank]. O(len^2) per token: exact and deterministic; a radix select replaces it later.
__global__ void topk_kernel(TopkParams p) {
  const long long t = blockIdx.x;
  const float* scores = p.scores + t * p.max_context;
  const int len = min(p.token_pos[t] + 1, p.max_context);
  for (int i = threadIdx.x; i < p.k; i += blockDim.x) p.out[t * p.k + i] = -1;
  __syncthreads();
  for (int s = threadIdx.x; s < len; s += blockDim.x) {
    const float v = scores[s];
    int rank = 0;
    for (int o = 0; o < len && rank < p.k; ++o) rank += (scores[o] > v || (scores[o] == v && o < s)) ? 1 : 0;
    if (rank < p.k) p.out[t * p.k + rank] = s;
  }
}

void check_attention_shape(const MlaAttentionParams& p) {
  if (p.kv_lora > kAttnThreads * kMaxSlice) {
    std::fprintf(stderr, "cuda::mla_attention: kv_lora %d > %d\n", p.kv_lora, kAttnThreads * kMaxSlice);
    std::abort();
  }
}

}  // namespace

void mla_attention_dense(MlaAttentionParams p) {
  if (p.n_tokens == 0) return;
  check_attention_shape(p);
  mla_attention_kernel<<<p.n_tokens * p.n_heads, kAttnThreads>>>(p, false);
  TL_CUDA_LAUNCHED();
}

void mla_attention_sparse(MlaAttentionParams p) {
  if (p.n_tokens == 0) return;
  check_attention_shape(p);
  mla_attention_kernel<<<p.n_tokens * p.n_heads, kAttnThreads>>>(p, true);
  TL_CUDA_LAUNCHED();
}

void kv_write(KvWriteParams p) {
  if (p.n_tokens == 0) return;
  kv_write_kernel<<<blocks_for(p.n_tokens), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void index_k_write(IndexKWriteParams p) {
  const long long n = static_cast<long long>(p.n_tokens) * p.head_dim;
  if (n == 0) return;
  index_k_write_kernel<<<blocks_for(n), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void indexer_score(IndexerScoreParams p) {
  if (p.n_tokens == 0 || p.max_context == 0) return;
  indexer_score_kernel<<<dim3(blocks_for(p.max_context), p.n_tokens), kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

void topk_select(TopkParams p) {
  if (p.n_tokens == 0) return;
  topk_kernel<<<p.n_tokens, kThreads>>>(p);
  TL_CUDA_LAUNCHED();
}

}  // namespace tokenline::cuda
