// ForwardPass: one GPU rank's forward step of a glm_moe_dsa model (or, below, a GQA hybrid) on a KernelSet
// (CPU reference or CUDA): embed, then per layer rmsnorm, a_proj, norm_rope_kv_write, q_b_proj, indexer_score
// + topk_select (full layers; shared layers reuse the last full layer's top-k), sparse_mla, o_proj (+
// attn_allreduce under TP), rmsnorm, dense_mlp or router + [dispatch] + expert_gemm + [combine] +
// shared_expert
// (+ mlp_allreduce under TP), then the final norm, lm_head (+ vocab_allgather under TP) and sample on the
// rows that sample; draft() then runs the MTP layer (mtp_draft). The rank holds its RankWeights slice;
// collectives go through the rank's communicators, which need host memory (the CPU set). Times each op with
// the Clock, synchronizing the backend at op boundaries (whole-step totals per op). Owns the rank's paged KV
// and indexer caches, addressed by the core's page ids. Not thread-safe; one thread per rank.
// A GQA model (gpt-oss, Qwen3.5; one rank) runs per layer either GQA attention - a_proj (q, k, v),
// norm_rope_kv_write (qk norm, RoPE, BF16 page write), sparse_mla (full layers: every key) or window_attn
// (sliding-window layers: the last W keys, in the core's window pages), o_proj (after the output gate) -
// or Gated DeltaNet - gdn_proj (in_proj), gdn_scan (conv1d, delta rule, gated norm, in the request's
// state slot), gdn_proj (out_proj) - then the MoE as above.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/runtime/clock.h"
#include "engine/runtime/device_buffer.h"
#include "engine/runtime/host_kv_pool.h"
#include "engine/runtime/model_shape.h"
#include "engine/runtime/rank_weights.h"
#include "kernels/communicator.h"
#include "kernels/cpu/sharded_layers.h"
#include "kernels/kernel_set.h"

namespace tokenline {

// The tokens one rank computes this step, flattened over its sequences, and their page table (host).
struct ForwardInput {
  std::vector<int32_t> token_ids;      // [n]
  std::vector<int32_t> seq, pos;       // [n] sequence index and position of each token
  std::vector<int32_t> indptr;         // [sequences + 1] CSR over indices
  std::vector<int32_t> indices;        // page ids of each sequence, token order
  std::vector<int32_t> last_page_len;  // [sequences]
  std::vector<int32_t> sample_rows;    // token rows whose logits are sampled (one per sampling sequence)
  // GQA hybrids: each sequence's window-layer pages (CSR, token order) and the page index of its first
  // (the core's window pool, empty without window layers); its recurrent-state slot, and 1 where that
  // slot starts afresh this step (the sequence's first prefill chunk: a new, preempted or retracted
  // request recomputes from position 0); empty without Gated DeltaNet layers.
  std::vector<int32_t> window_indptr, window_indices, window_first;
  std::vector<int32_t> state_slot;
  std::vector<uint8_t> state_reset;
  int32_t max_context = 0;  // 1 + the largest position
  void clear();
};

// The MTP layer's rows for one step: rows of the step whose next token is known (prompt tokens of a
// prefill chunk, tokens just emitted), in row order per sequence, and which of them draft.
struct DraftInput {
  std::vector<int32_t> rows;        // [m] rows of the step's ForwardInput (hidden state, sequence, position)
  std::vector<int32_t> next_ids;    // [m] the token that follows each row
  std::vector<int32_t> draft_rows;  // indices into rows whose MTP output is sampled as a draft token
  void clear();
};

struct ForwardOutput {
  std::vector<float> logits;                 // [sample_rows, vocab] (host)
  std::vector<int32_t> sampled;              // [sample_rows] greedy (argmax, lowest id on ties)
  std::vector<std::vector<int32_t>> drafts;  // [draft_rows] 1..chain greedy MTP drafts each (draft())
  std::array<double, kRunOpCount> op_s{};    // seconds per op this step
};

// The groups a rank takes part in; null where the group has one rank.
struct RankComms {
  Communicator* tp = nullptr;  // attention heads, MLP intermediate and vocabulary shards (size tp)
  Communicator* ep = nullptr;  // routed experts (size ep; rank = ep_rank)
};

struct ForwardConfig {
  RankShard shard;
  RankComms comms;
  int64_t total_pages = 0;  // KV pages of this rank's attention group (the core's KvConfig)
  int32_t page_tokens = 64;
  int64_t window_pages = 0;  // the window layers' page pool (the core's WindowKvConfig), GQA hybrids
  int64_t state_slots = 0;   // recurrent-state slots (the core's StatePool), Gated DeltaNet hybrids
};

class ForwardPass {
 public:
  // REQUIRES: shape, weights and kernels outlive the pass; comms non-null only with host-memory kernels.
  ForwardPass(const ModelShape& shape, const RankWeights& weights, const KernelSet& kernels,
              const ForwardConfig& config);

  // Every rank of a group must call run for the same step (an idle rank with an empty input).
  void run(const ForwardInput& in, Clock& clock, ForwardOutput& out);
  // After run() on the same input: the MTP layer over d's rows (their KV at their positions), then up to
  // chain drafts per drafting row into out.drafts (fewer where the entry's pages end). REQUIRES: the
  // shape has an MTP layer; every rank calls it with the same chain (an idle one with an empty d).
  void draft(const ForwardInput& in, const DraftInput& d, int32_t chain, Clock& clock, ForwardOutput& out);
  // The rank's paged caches (every layer's KV, every full layer's indexer keys) as regions of whole pages:
  // what a host-tier copy of a page moves (host_kv_pool.h).
  std::vector<KvRegion> kv_regions() const;

 private:
  void upload(const ForwardInput& in);
  void attention(int32_t layer, Clock& clock, ForwardOutput& out);
  void gqa_attention(int32_t layer, Clock& clock, ForwardOutput& out);
  void gated_deltanet(int32_t layer, Clock& clock, ForwardOutput& out);
  void reset_states(const ForwardInput& in);
  void project_and_write_kv(int32_t layer, Clock& clock, ForwardOutput& out);
  void select(int32_t layer, Clock& clock, ForwardOutput& out);
  void mlp(int32_t layer, Clock& clock, ForwardOutput& out);
  void routed_experts(int32_t layer, Clock& clock, ForwardOutput& out);
  void expert_parallel(MoeExpertsParams p, Clock& clock, ForwardOutput& out);
  void mtp_pass(const std::vector<int32_t>& rows_of_h, const std::vector<int32_t>& next_ids,
                const std::vector<int32_t>& seq, const std::vector<int32_t>& pos, Clock& clock,
                ForwardOutput& out);
  void chain_pass(const ForwardInput& in, std::vector<int32_t>& entry, std::vector<int32_t>& row,
                  std::vector<int32_t>& seq, std::vector<int32_t>& pos, Clock& clock, ForwardOutput& out);
  void head(const std::vector<int32_t>& rows_of_h, const float* norm, Clock& clock, ForwardOutput& out,
            std::vector<float>* logits, std::vector<int32_t>& sampled);
  RunOp op_of(RunOp op) const;  // the op a timer books: mtp_draft for compute while drafting
  void linear(DeviceBuffer<float>& y, const float* x, const float* w, int32_t m, int32_t n, int32_t k);
  void swiglu(DeviceBuffer<float>& y, DeviceBuffer<float>& act, const float* w_gate_up, const float* w_down,
              int32_t inter);
  void all_reduce(DeviceBuffer<float>& buf, RunOp op, Clock& clock, ForwardOutput& out);
  void add_to_residual(const DeviceBuffer<float>& delta);
  PagedKvTable table() const;
  PagedKvTable window_table() const;

  const ModelShape& shape_;
  const RankWeights& weights_;
  const KernelSet& k_;
  ForwardConfig config_;
  ShardDims dims_;
  int32_t n_ = 0, sequences_ = 0, max_context_ = 0;  // this step
  bool drafting_ = false;
  std::vector<DeviceBuffer<uint8_t>> kv_;     // [layer (+ the MTP layer)][slot * kv_token_bytes]
  std::vector<DeviceBuffer<uint8_t>> idx_k_;  // [layer][slot * idx_dim * 2]; empty on shared layers
  std::vector<DeviceBuffer<float>> state_;    // [layer][state slot * GdnDims::state_floats]; GDN layers
  DeviceBuffer<int32_t> win_indptr_{k_}, win_indices_{k_}, win_first_{k_}, state_slot_{k_};
  DeviceBuffer<float> gdn_qkv_{k_}, gdn_conv_{k_}, gdn_z_{k_}, gdn_a_{k_}, gdn_b_{k_}, gdn_o_{k_};
  // This step's input, in the backend's memory.
  DeviceBuffer<int32_t> token_ids_{k_}, seq_{k_}, pos_{k_}, indptr_{k_}, indices_{k_}, last_page_len_{k_},
      sample_rows_{k_};
  // Activations, reused across steps.
  DeviceBuffer<float> h_{k_}, x_{k_}, q_a_{k_}, q_{k_}, kv_a_{k_}, q_latent_{k_}, o_latent_{k_}, o_{k_},
      tmp_{k_}, tmp2_{k_}, tmp3_{k_}, scores_{k_}, hw_{k_}, idx_q_{k_}, idx_k_rows_{k_}, router_w_{k_},
      logits_{k_}, vocab_shards_{k_};
  DeviceBuffer<int32_t> topk_{k_}, expert_ids_{k_}, sampled_{k_};
  // Greedy sampling's per-row parameters.
  DeviceBuffer<float> temperature_{k_}, top_p_{k_};
  DeviceBuffer<int32_t> top_k_{k_};
  DeviceBuffer<uint64_t> sample_seeds_{k_};
  cpu::EpMoe ep_moe_;
};

}  // namespace tokenline
