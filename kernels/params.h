// One by-value parameter struct per kernel, shared by kernels/cpu (host pointers) and kernels/cuda (device
// pointers). The destination is the first field. Shapes are row-major; [a, b] means a rows of b elements.
// Activations are FP32; weights are typed (DType). Compiles as C++17 (nvcc) and C++20.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/paged_kv.h"

namespace tokenline {

// out[t] = table[token_ids[t] - vocab_begin] when the id is in this shard's rows, else zeros (TP vocab).
struct EmbeddingParams {
  float* out = nullptr;                // [n_tokens, hidden]
  const void* table = nullptr;         // [vocab_rows, hidden] of table_dtype
  const int32_t* token_ids = nullptr;  // [n_tokens]
  DType table_dtype = DType::kF32;
  int32_t n_tokens = 0, hidden = 0, vocab_begin = 0, vocab_rows = 0;
};

// If residual: residual += x, out = rmsnorm(residual) * weight; else out = rmsnorm(x) * weight.
struct RmsNormParams {
  float* out = nullptr;           // [n_rows, out_stride]
  float* residual = nullptr;      // [n_rows, dim] or nullptr
  const float* x = nullptr;       // [n_rows, in_stride]
  const float* weight = nullptr;  // [dim]
  int32_t n_rows = 0, dim = 0, in_stride = 0, out_stride = 0;
  float eps = 1e-6f;
};

// out = x * w^T (+ out if accumulate). FP8 weights use DeepSeek's 128x128 block scales when w_scale is set.
constexpr int32_t kWeightScaleBlock = 128;  // rows and columns per FP8 weight scale (weight_scale_inv)
struct GemmParams {
  float* out = nullptr;            // [m, n]
  const float* x = nullptr;        // [m, k]
  const void* w = nullptr;         // [n, k] of w_dtype
  const float* w_scale = nullptr;  // [ceil(n/128), ceil(k/128)] or nullptr (scale 1)
  DType w_dtype = DType::kF32;
  int32_t m = 0, n = 0, k = 0;
  bool accumulate = false;
};

// Interleaved-pair RoPE (DeepSeek's complex view): pairs (2i, 2i+1) of each head's rope slice rotate by
// pos * theta^(-2i/rope_dim). In place on x.
struct RopeParams {
  float* x = nullptr;                  // [n_tokens, n_heads, head_stride]; rotates [rope_offset, +rope_dim)
  const int32_t* positions = nullptr;  // [n_tokens]
  int32_t n_tokens = 0, n_heads = 0, head_stride = 0, rope_offset = 0, rope_dim = 0;
  float theta = 10000.0f;
  const float* inv_freq = nullptr;  // [rope_dim / 2] frequencies replacing theta^(-2i/rope_dim) (YaRN-scaled)
};

// Per-pair rotation frequency: the given table (YaRN) or theta^(-2i/rope_dim).
TL_HD inline double rope_inv_freq(const RopeParams& p, int32_t i) {
  return p.inv_freq != nullptr ? static_cast<double>(p.inv_freq[i])
                               : pow(static_cast<double>(p.theta), -2.0 * i / p.rope_dim);
}

// out = (x - mean) / sqrt(var + eps) * weight + bias (bias may be nullptr); the indexer's key norm.
struct LayerNormParams {
  float* out = nullptr;           // [n_rows, dim]
  const float* x = nullptr;       // [n_rows, dim]
  const float* weight = nullptr;  // [dim]
  const float* bias = nullptr;    // [dim] or nullptr
  int32_t n_rows = 0, dim = 0;
  float eps = 1e-6f;
};

// Writes each token's normalized latent and rotated rope key into its page slot (token_seq, token_pos).
struct KvWriteParams {
  uint8_t* kv_cache = nullptr;         // [num_pages, page_size, kv_token_bytes(layout)] one layer
  const float* latent = nullptr;       // [n_tokens, row_stride] first kv_lora values
  const float* rope = nullptr;         // [n_tokens, row_stride] first rope_dim values
  const int32_t* token_seq = nullptr;  // [n_tokens] sequence index into table
  const int32_t* token_pos = nullptr;  // [n_tokens] position within the sequence
  PagedKvTable table;
  KvLayout layout = KvLayout::kBf16;
  int32_t n_tokens = 0, row_stride = 0, kv_lora = 0, rope_dim = 0;
};

// W_UK absorbed into q: q_latent[t,h,c] = sum_d q[t,h,d] * w_kv_b[h*(nope+v) + d, c], d < nope.
struct MlaAbsorbQParams {
  float* q_latent = nullptr;     // [n_tokens, n_heads, kv_lora]
  const float* q = nullptr;      // [n_tokens, n_heads, nope + rope] (q_b_proj output)
  const void* w_kv_b = nullptr;  // [n_heads * (nope + v), kv_lora] of w_dtype
  DType w_dtype = DType::kF32;
  int32_t n_tokens = 0, n_heads = 0, nope_dim = 0, rope_dim = 0, v_dim = 0, kv_lora = 0;
};

// W_UV absorbed into the output: out[t,h,j] = sum_c o_latent[t,h,c] * w_kv_b[h*(nope+v) + nope + j, c].
struct MlaAbsorbOutParams {
  float* out = nullptr;             // [n_tokens, n_heads * v] (o_proj input)
  const float* o_latent = nullptr;  // [n_tokens, n_heads, kv_lora]
  const void* w_kv_b = nullptr;     // [n_heads * (nope + v), kv_lora] of w_dtype
  DType w_dtype = DType::kF32;
  int32_t n_tokens = 0, n_heads = 0, nope_dim = 0, v_dim = 0, kv_lora = 0;
};

// MLA attention in latent space over a paged cache. Token t attends to positions [0, token_pos[t]] of
// sequence token_seq[t] (dense) or to the positions listed in topk_indices (sparse; -1 = empty slot).
// score = (q_latent . latent + q_rope . k_rope) * softmax_scale; out = softmax(score) . latent.
struct MlaAttentionParams {
  float* out = nullptr;                   // [n_tokens, n_heads, kv_lora]
  const float* q_latent = nullptr;        // [n_tokens, n_heads, kv_lora]
  const float* q_rope = nullptr;          // row (t, h) at q_rope + (t * n_heads + h) * q_rope_stride
  const uint8_t* kv_cache = nullptr;      // [num_pages, page_size, kv_token_bytes(layout)]
  const int32_t* token_seq = nullptr;     // [n_tokens]
  const int32_t* token_pos = nullptr;     // [n_tokens]
  const int32_t* topk_indices = nullptr;  // [n_tokens, topk] (sparse only)
  PagedKvTable table;
  KvLayout layout = KvLayout::kBf16;
  int32_t n_tokens = 0, n_heads = 0, kv_lora = 0, rope_dim = 0, q_rope_stride = 0, topk = 0;
  float softmax_scale = 1.0f;
};

// Stores indexer keys (BF16, head_dim per token) into their page slots; same table as the MLA cache.
struct IndexKWriteParams {
  uint8_t* k_cache = nullptr;          // [num_pages, page_size, head_dim * 2]
  const float* k = nullptr;            // [n_tokens, head_dim]
  const int32_t* token_seq = nullptr;  // [n_tokens]
  const int32_t* token_pos = nullptr;  // [n_tokens]
  PagedKvTable table;
  int32_t n_tokens = 0, head_dim = 0;
};

// DeepSeek-V3.2 lightning indexer: out[t,s] = sum_h head_weights[t,h] * relu(q[t,h] . k[s]) for s <=
// token_pos[t]; -inf for s > token_pos[t] (up to max_context).
struct IndexerScoreParams {
  float* out = nullptr;                 // [n_tokens, max_context]
  const float* q = nullptr;             // [n_tokens, n_heads, head_dim]
  const float* head_weights = nullptr;  // [n_tokens, n_heads] (already scaled)
  const uint8_t* k_cache = nullptr;     // [num_pages, page_size, head_dim * 2] BF16
  const int32_t* token_seq = nullptr;   // [n_tokens]
  const int32_t* token_pos = nullptr;   // [n_tokens]
  PagedKvTable table;
  int32_t n_tokens = 0, n_heads = 0, head_dim = 0, max_context = 0;
};

// The k highest scores among positions [0, token_pos[t]] (ties: lower position first), descending;
// slots beyond the context are -1.
struct TopkParams {
  int32_t* out = nullptr;              // [n_tokens, k]
  const float* scores = nullptr;       // [n_tokens, max_context]
  const int32_t* token_pos = nullptr;  // [n_tokens]
  int32_t n_tokens = 0, max_context = 0, k = 0;
};

// DeepSeek-V3 router: s = sigmoid(logits); choice uses s + correction_bias; a group scores the sum of its
// two best biased experts; topk_group groups survive; topk experts chosen among them; weights are s
// (unbiased), normalized to sum 1 if normalize, times routed_scaling_factor. Ties: lower id first.
struct RouterParams {
  int32_t* expert_ids = nullptr;           // [n_tokens, topk]
  float* weights = nullptr;                // [n_tokens, topk]
  const float* logits = nullptr;           // [n_tokens, n_experts]
  const float* correction_bias = nullptr;  // [n_experts] or nullptr
  int32_t n_tokens = 0, n_experts = 0, n_group = 1, topk_group = 1, topk = 0;
  float routed_scaling_factor = 1.0f;
  bool normalize = true;
};

// out[t] = sum_k weights[t,k] * expert_{ids[t,k]}(x[t]) over the experts held here
// [expert_begin, expert_begin + n_local_experts); SwiGLU expert: down(silu(gate x) * (up x)).
struct MoeExpertsParams {
  float* out = nullptr;                 // [n_tokens, hidden] (overwritten)
  const float* x = nullptr;             // [n_tokens, hidden]
  const int32_t* expert_ids = nullptr;  // [n_tokens, topk] global expert ids
  const float* weights = nullptr;       // [n_tokens, topk]
  const void* w_gate_up = nullptr;      // [n_local_experts, 2 * inter, hidden]: gate rows, then up rows
  const void* w_down = nullptr;         // [n_local_experts, hidden, inter]
  DType w_dtype = DType::kF32;
  int32_t n_tokens = 0, topk = 0, hidden = 0, inter = 0, expert_begin = 0, n_local_experts = 0;
  const float* w_gate_up_scale =
      nullptr;  // [n_local_experts, ceil(2*inter/128), ceil(hidden/128)] FP8 scales or nullptr
  const float* w_down_scale = nullptr;  // [n_local_experts, ceil(hidden/128), ceil(inter/128)] or nullptr
};

// Scales per expert for a [rows, cols] FP8 weight with 128x128 blocks.
TL_HD inline int64_t weight_scale_count(int64_t rows, int64_t cols) {
  return ((rows + kWeightScaleBlock - 1) / kWeightScaleBlock) *
         ((cols + kWeightScaleBlock - 1) / kWeightScaleBlock);
}

// out = silu(gate) * up, gate_up row = [gate (inter) | up (inter)].
struct SiluMulParams {
  float* out = nullptr;            // [n_rows, inter]
  const float* gate_up = nullptr;  // [n_rows, 2 * inter]
  int32_t n_rows = 0, inter = 0;
};

// out = out_scale * out + x_scale * x, elementwise (x may be nullptr: out = out_scale * out). The residual
// adds and scalings between the model's kernels, so that no backend needs host loops over activations.
struct ScaleAddParams {
  float* out = nullptr;      // [n]
  const float* x = nullptr;  // [n] or nullptr
  int64_t n = 0;
  float out_scale = 1.0f, x_scale = 1.0f;
};

// MTP input: out[t] = [rmsnorm(embedding[t]) * enorm | rmsnorm(hidden[t]) * hnorm] (eh_proj input).
struct MtpInputParams {
  float* out = nullptr;                  // [n_tokens, 2 * hidden]
  const float* embedding = nullptr;      // [n_tokens, hidden] embedding of the next token
  const float* hidden_states = nullptr;  // [n_tokens, hidden] last hidden state of the main model
  const float* enorm = nullptr;          // [hidden]
  const float* hnorm = nullptr;          // [hidden]
  int32_t n_tokens = 0, hidden = 0;
  float eps = 1e-6f;
};

// Per-row sampling. temperature 0 -> argmax (lowest id on ties). Otherwise p = softmax(logits / T); the
// candidates are the top_k most likely ids (0 = all; ties: lower id first), cut to the shortest prefix
// whose mass reaches top_p; one uniform u from pcg32(seed, stream = step) picks the candidate where the
// running mass over candidates in ascending id order first exceeds u * candidate mass.
struct SampleParams {
  int32_t* out = nullptr;              // [n_rows]
  const float* logits = nullptr;       // [n_rows, vocab]
  const float* temperature = nullptr;  // [n_rows]
  const int32_t* top_k = nullptr;      // [n_rows]
  const float* top_p = nullptr;        // [n_rows]
  const uint64_t* seeds = nullptr;     // [n_rows]
  const uint64_t* steps = nullptr;     // [n_rows] decode step of the row's request
  int32_t n_rows = 0, vocab = 0;
};

// ---- GQA (gpt-oss, Qwen3.5, Llama) and Gated DeltaNet (Qwen3-Next, Qwen3.5) ----

// Bytes per token per layer of a GQA page: kv_heads x head_dim keys, then as many values, BF16.
TL_HD inline int32_t gqa_kv_token_bytes(int32_t kv_heads, int32_t head_dim) {
  return 4 * kv_heads * head_dim;
}

// Page of position pos of sequence b in a table whose sequence b starts at page index page_first[b] (a
// window-layer table: the core's window pool holds only the pages of a request's window); -1 when that
// position's page is not in the table. page_first nullptr: every sequence's table starts at page 0.
TL_HD inline int64_t gqa_slot(const PagedKvTable& t, const int32_t* page_first, int32_t b, int32_t pos) {
  const int32_t first = page_first != nullptr ? page_first[b] : 0;
  const int32_t i = pos / t.page_size - first;
  if (i < 0 || i >= t.indptr[b + 1] - t.indptr[b]) return -1;
  return static_cast<int64_t>(t.indices[t.indptr[b] + i]) * t.page_size + pos % t.page_size;
}

// Writes each token's keys and values (BF16) into its page slot; a token whose page is not in the table
// (out of a window table) is not written.
struct GqaKvWriteParams {
  uint8_t* kv_cache = nullptr;          // [num_pages, page_size, gqa_kv_token_bytes] one layer
  const float* k = nullptr;             // [n_tokens, kv_heads * head_dim]
  const float* v = nullptr;             // [n_tokens, kv_heads * head_dim]
  const int32_t* token_seq = nullptr;   // [n_tokens]
  const int32_t* token_pos = nullptr;   // [n_tokens]
  const int32_t* page_first = nullptr;  // [sequences] or nullptr (gqa_slot)
  PagedKvTable table;
  int32_t n_tokens = 0, kv_heads = 0, head_dim = 0;
};

// Causal GQA over a paged cache: token t's query head h attends with kv head h / (n_heads / kv_heads) to
// positions [max(0, pos - window + 1), pos] of its sequence (window 0: [0, pos]). With sinks, head h's
// softmax has one more logit sinks[h] whose value is zero (gpt-oss: transformers' GptOssAttention
// eager_attention_forward concatenates the sink to the scores, softmaxes, and drops its column).
// REQUIRES: every attended position's page is in the table.
struct GqaAttentionParams {
  float* out = nullptr;                 // [n_tokens, n_heads, head_dim]
  const float* q = nullptr;             // row (t, h) at q + (t * n_heads + h) * q_head_stride
  const uint8_t* kv_cache = nullptr;    // [num_pages, page_size, gqa_kv_token_bytes]
  const int32_t* token_seq = nullptr;   // [n_tokens]
  const int32_t* token_pos = nullptr;   // [n_tokens]
  const int32_t* page_first = nullptr;  // [sequences] or nullptr (gqa_slot)
  const float* sinks = nullptr;         // [n_heads] or nullptr
  PagedKvTable table;
  int32_t n_tokens = 0, n_heads = 0, kv_heads = 0, head_dim = 0, q_head_stride = 0, window = 0;
  float softmax_scale = 1.0f;
};

// x[i] *= sigmoid(gate[i]) per row: Qwen3-Next / Qwen3.5's attention output gate (transformers
// Qwen3NextAttention: attn_output * torch.sigmoid(gate)).
struct SigmoidGateParams {
  float* x = nullptr;           // [n_rows, x_stride], first dim values gated
  const float* gate = nullptr;  // [n_rows, gate_stride]
  int32_t n_rows = 0, dim = 0, x_stride = 0, gate_stride = 0;
};

// Gated DeltaNet's causal depthwise conv1d then SiLU over one step's tokens, sequence by sequence in
// token order, continuing each sequence's conv state (its conv_kernel - 1 previous inputs) and leaving
// the newest inputs there: out[t, c] = silu(sum_j w[c, j] * in[t - (K - 1) + j, c]) (transformers
// Qwen3NextGatedDeltaNet: causal_conv1d_fn / torch_causal_conv1d_update, no bias, activation silu).
struct GdnConvParams {
  float* out = nullptr;                // [n_tokens, channels]
  const float* x = nullptr;            // [n_tokens, channels] (q | k | v projections)
  float* state = nullptr;              // [slots, state_stride]: conv state [K - 1, channels] at offset 0
  const float* weight = nullptr;       // [channels, K]
  const int32_t* token_seq = nullptr;  // [n_tokens], each sequence's tokens consecutive and in order
  const int32_t* seq_slot = nullptr;   // [sequences] state slot
  int32_t n_tokens = 0, channels = 0, kernel = 0;
  int64_t state_stride = 0;
};

// The gated delta rule, token by token (transformers Qwen3-Next torch_recurrent_gated_delta_rule, with
// use_qk_l2norm_in_kernel; fla-org/flash-linear-attention fused_recurrent_gated_delta_rule): per value
// head h (key head h / (value_heads / key_heads)), q and k L2-normalized, q scaled by key_dim^-1/2,
// g = -exp(a_log[h]) * softplus(a[t, h] + dt_bias[h]), beta = sigmoid(b[t, h]);
// S = S * exp(g); delta = (v - S^T k) * beta; S = S + k delta^T; out = S^T q. S is [key_dim, value_dim]
// per head, FP32, in the sequence's slot.
struct GdnRecurrenceParams {
  float* out = nullptr;                // [n_tokens, value_heads, value_dim]
  const float* qkv = nullptr;          // [n_tokens, qkv_stride]: q [key_heads, key_dim] | k | v
  const float* a = nullptr;            // [n_tokens, value_heads]
  const float* b = nullptr;            // [n_tokens, value_heads]
  const float* a_log = nullptr;        // [value_heads]
  const float* dt_bias = nullptr;      // [value_heads]
  float* state = nullptr;              // [slots, state_stride]: S [value_heads, key_dim, value_dim] at
                                       // offset state_offset
  const int32_t* token_seq = nullptr;  // [n_tokens], each sequence's tokens consecutive and in order
  const int32_t* seq_slot = nullptr;   // [sequences]
  int32_t n_tokens = 0, key_heads = 0, value_heads = 0, key_dim = 0, value_dim = 0, qkv_stride = 0;
  int64_t state_stride = 0, state_offset = 0;
};

// out = rmsnorm(x) * weight * silu(z) per row (transformers Qwen3NextRMSNormGated).
struct GatedRmsNormParams {
  float* out = nullptr;           // [n_rows, dim]
  const float* x = nullptr;       // [n_rows, dim]
  const float* z = nullptr;       // [n_rows, dim]
  const float* weight = nullptr;  // [dim]
  int32_t n_rows = 0, dim = 0;
  float eps = 1e-6f;
};

}  // namespace tokenline
