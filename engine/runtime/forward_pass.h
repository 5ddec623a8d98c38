// ForwardPass: one attention rank's forward step of a glm_moe_dsa model on the CPU reference kernels:
// embed, then per layer rmsnorm, a_proj, norm_rope_kv_write, q_b_proj, indexer_score + topk_select (full
// layers; shared layers reuse the last full layer's top-k), sparse_mla, o_proj, rmsnorm, dense_mlp or
// router + expert_gemm + shared_expert, then the final norm, lm_head and sample on the rows that sample.
// Times each op with the Clock (whole-step totals per op). Owns the rank's paged KV and indexer caches,
// addressed by the core's page ids. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/runtime/clock.h"
#include "engine/runtime/model_shape.h"
#include "engine/runtime/model_weights.h"

namespace tokenline {

// The tokens one rank computes this step, flattened over its sequences, and their page table.
struct ForwardInput {
  std::vector<int32_t> token_ids;      // [n]
  std::vector<int32_t> seq, pos;       // [n] sequence index and position of each token
  std::vector<int32_t> indptr;         // [sequences + 1] CSR over indices
  std::vector<int32_t> indices;        // page ids of each sequence, token order
  std::vector<int32_t> last_page_len;  // [sequences]
  std::vector<int32_t> sample_rows;    // token rows whose logits are sampled (one per sampling sequence)
  int32_t max_context = 0;             // 1 + the largest position
  void clear();
};

struct ForwardOutput {
  std::vector<float> logits;               // [sample_rows, vocab]
  std::vector<int32_t> sampled;            // [sample_rows] greedy (argmax, lowest id on ties)
  std::array<double, kRunOpCount> op_s{};  // seconds per op this step
};

class ForwardPass {
 public:
  // REQUIRES: weights outlive the pass. total_pages * page_tokens slots per layer cache.
  ForwardPass(const ModelShape& shape, const ModelWeights& weights, int64_t total_pages, int32_t page_tokens);

  void run(const ForwardInput& in, Clock& clock, ForwardOutput& out);

 private:
  void attention(int32_t layer, const ForwardInput& in, Clock& clock, ForwardOutput& out);
  void mlp(int32_t layer, const ForwardInput& in, Clock& clock, ForwardOutput& out);
  void select(int32_t layer, const ForwardInput& in, const std::vector<float>& x, Clock& clock,
              ForwardOutput& out);
  void head(const ForwardInput& in, Clock& clock, ForwardOutput& out);

  const ModelShape& shape_;
  const ModelWeights& weights_;
  int32_t page_tokens_;
  std::vector<std::vector<uint8_t>> kv_;     // [layer][slot * kv_token_bytes]
  std::vector<std::vector<uint8_t>> idx_k_;  // [layer][slot * idx_dim * 2]; empty on shared layers
  // Activations, reused across steps.
  std::vector<float> h_, x_, q_a_, q_, kv_a_, q_latent_, o_latent_, o_, tmp_, tmp2_, scores_, hw_, idx_q_,
      idx_k_rows_, router_w_;
  std::vector<int32_t> topk_, expert_ids_;
};

}  // namespace tokenline
