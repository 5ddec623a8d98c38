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
  kOProj,
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

struct ModelShape {
  std::string name;
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
// model and for one the runner cannot execute (not MLA, or no indexer).
ModelShape load_model_shape(const std::string& model);

}  // namespace tokenline
