// ModelShape: the sizes the model runner needs, as plain numbers, plus the ledger's op names the runner
// times. Built from an engine/model ModelConfig in model_shape.cpp, the one runtime file that includes
// engine/model (engine/model's KvLayout and the kernels' KvLayout share a name, so no file sees both).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tokenline {

// The ops the runner executes, in ledger order; their names come from engine/model's op_name.
enum class RunOp : uint8_t {
  kEmbed,
  kRmsnorm,
  kAProj,
  kNormRopeKvWrite,
  kQBProj,
  kIndexerScore,
  kTopkSelect,
  kSparseMla,
  kWindowAttn,  // sliding-window GQA layers
  kOProj,
  kGdnProj,        // Gated DeltaNet in_proj_qkv / z / b / a and out_proj
  kGdnScan,        // Gated DeltaNet causal conv1d + gated delta rule + gated RMSNorm
  kAttnAllreduce,  // TP: partial o_proj outputs summed over the attention group
  kDenseMlp,
  kRouter,
  kDispatch,  // EP: rows to their experts' ranks
  kExpertGemm,
  kSharedExpert,
  kCombine,       // EP: rows back to their tokens' ranks
  kMlpAllreduce,  // TP: partial dense-MLP or MoE outputs summed over the group
  kLmHead,
  kVocabAllgather,  // TP: vocabulary shards of the logits gathered
  kSample,
  kMtpDraft,  // the MTP layer over this step's rows and its draft tokens
  kCount,
};
inline constexpr int kRunOpCount = static_cast<int>(RunOp::kCount);

// True for the collectives (spans on the comm stream).
constexpr bool is_collective(RunOp op) {
  return op == RunOp::kAttnAllreduce || op == RunOp::kDispatch || op == RunOp::kCombine ||
         op == RunOp::kMlpAllreduce || op == RunOp::kVocabAllgather;
}

// A layer's token mixer, as the runner executes it (engine/model's MixerKind, the kinds the runner runs).
enum class LayerMixer : uint8_t {
  kAttention,      // the model's attention over the whole context (MLA + DSA, or GQA)
  kSlidingWindow,  // GQA over the last window_tokens keys (gpt-oss), KV in the core's window pages
  kGatedDeltaNet,  // Qwen3-Next / Qwen3.5 linear attention, state in the core's state slot
};

// Gated DeltaNet sizes (Qwen3-Next's linear_* fields).
struct GdnDims {
  int32_t key_heads = 0, value_heads = 0, key_dim = 0, value_dim = 0, conv_kernel = 0;
  int32_t conv_channels() const { return 2 * key_heads * key_dim + value_heads * value_dim; }
  // One request's state in one GDN layer, FP32 values: (conv_kernel - 1) past conv inputs, then the
  // [value_heads, key_dim, value_dim] delta-rule state.
  int64_t conv_floats() const { return int64_t{conv_kernel - 1} * conv_channels(); }
  int64_t state_floats() const { return conv_floats() + int64_t{value_heads} * key_dim * value_dim; }
};

struct ModelShape {
  std::string name;
  // GQA models (gpt-oss, Qwen3.5, Llama): query heads in `heads`, kv_heads x head_dim keys and values per
  // token in BF16 pages; MLA fields 0. mixers: one per layer (all kAttention for MLA).
  bool gqa = false;
  int32_t kv_heads = 0, head_dim = 0;
  bool qk_norm = false;            // Qwen3: RMSNorm over each head's query and key
  bool attn_output_gate = false;   // Qwen3-Next / Qwen3.5: q_proj also yields a sigmoid gate per head dim
  bool attention_sinks = false;    // gpt-oss: a learned sink logit per head in the softmax
  bool router_bias = true;         // DeepSeek / GLM e_score_correction_bias
  int32_t window_tokens = 0;       // W of the sliding-window layers
  std::vector<LayerMixer> mixers;  // [layers]
  GdnDims gdn;
  int64_t window_kv_bytes_per_token = 0;  // window layers' KV, all window layers
  int64_t state_bytes_per_request = 0;    // the runner's FP32 state of every GDN layer
  int32_t mixer_layers(LayerMixer kind) const {
    int32_t n = 0;
    for (LayerMixer m : mixers) n += m == kind ? 1 : 0;
    return n;
  }
  LayerMixer mixer(int32_t layer) const {
    return static_cast<size_t>(layer) < mixers.size() ? mixers[static_cast<size_t>(layer)]
                                                      : LayerMixer::kAttention;
  }
  int32_t layers = 0, dense_layers = 0;
  int32_t hidden = 0, heads = 0, q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v = 0;
  int32_t experts = 0, experts_per_token = 0, shared_experts = 0, moe_inter = 0, dense_inter = 0;
  int32_t n_group = 1, topk_group = 1;
  int32_t vocab = 0;
  int32_t idx_heads = 0, idx_dim = 0, idx_topk = 0;
  int32_t mtp_layers = 0;             // 0 or 1: the MTP (next-token) layer after the main layers
  std::vector<uint8_t> indexer_full;  // [layers + mtp_layers]: 1 when the layer scores with its own indexer
  int64_t max_context_tokens = 0;
  bool fp8_kv = true;                   // fp8_ds_mla cache (else bf16)
  int64_t kv_bytes_per_token = 0;       // main KV cache, all layers (engine/model's layout bytes)
  int64_t indexer_bytes_per_token = 0;  // BF16 indexer keys, all full layers
  float rope_theta = 10000.0f;
  float eps = 1e-6f;
  float routed_scaling = 2.5f;                      // GLM-5 / DeepSeek-V3 routed_scaling_factor
  std::array<const char*, kRunOpCount> op_names{};  // static storage (engine/model's op table)

  bool is_moe_layer(int32_t layer) const { return experts > 0 && layer >= dense_layers; }
  const char* op_name(RunOp op) const { return op_names[static_cast<size_t>(op)]; }
};

// The shape of a preset or config.json (engine/model's load_model). Throws InputError for an unknown
// model and for one the runner cannot execute: MLA without a DSA indexer, or a GQA model with chunked
// attention or Mamba-2 layers, an MTP layer, or biases the runner does not hold.
ModelShape load_model_shape(const std::string& model);

}  // namespace tokenline
