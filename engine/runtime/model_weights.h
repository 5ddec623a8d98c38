// ModelWeights: every tensor of a glm_moe_dsa model (or of a GQA / Gated DeltaNet hybrid) as FP32 host
// arrays, named as in the checkpoint (Hugging Face names; routed and shared experts stored fused: gate rows
// then up rows). Filled by seeded random initialisation or read from a safetensors file; written back with
// save(). Immutable after load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/model_shape.h"

namespace tokenline {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t elements() const;
};

// The checkpoint's tensors for this shape, in a fixed order.
std::vector<TensorSpec> checkpoint_tensors(const ModelShape& shape);

// One layer's weights (pointers into ModelWeights' storage).
struct LayerWeights {
  const float *attn_norm, *ffn_norm;
  const float *q_a, *q_a_norm, *q_b, *kv_a, *kv_norm, *kv_b, *o;
  const float *idx_q, *idx_k, *idx_k_norm, *idx_k_norm_bias, *idx_w;  // idx_*: null on shared layers
  const float *dense_gate_up, *dense_down;                            // dense layers
  const float *gate, *gate_bias, *experts_gate_up, *experts_down;     // MoE layers
  const float *shared_gate_up, *shared_down;                          // MoE layers
  // GQA attention layers (full and sliding-window): q_proj rows per head [query | gate] with
  // attn_output_gate; o (above) is o_proj. q_norm, k_norm: qk_norm only; sinks: attention_sinks only.
  const float *q_proj = nullptr, *k_proj = nullptr, *v_proj = nullptr, *q_norm = nullptr, *k_norm = nullptr,
              *sinks = nullptr;
  // Gated DeltaNet layers (Qwen3.5's linear_attn.* names; conv1d.weight as [channels, kernel]).
  const float *gdn_qkv = nullptr, *gdn_z = nullptr, *gdn_b = nullptr, *gdn_a = nullptr, *gdn_conv = nullptr,
              *gdn_a_log = nullptr, *gdn_dt_bias = nullptr, *gdn_norm = nullptr, *gdn_out = nullptr;
};

// The MTP layer's own tensors beside its decoder layer (layer index `layers`); it shares the embedding and
// the LM head with the main model (DeepSeek-V3's shared_head.head is a copy of lm_head).
struct MtpWeights {
  const float* eh_proj = nullptr;  // [hidden, 2 * hidden] over [enorm(embedding) | hnorm(hidden)]
  const float *enorm = nullptr, *hnorm = nullptr, *head_norm = nullptr;  // [hidden]
};

class ModelWeights {
 public:
  // Uniform(-1/sqrt(fan_in), +1/sqrt(fan_in)) matrices and 1 +- 0.1 norm weights from pcg32(seed, tensor i).
  ModelWeights(ModelWeights&&) = default;  // data_'s buffers move with it, so the pointers stay valid
  ModelWeights(const ModelWeights&) = delete;
  ModelWeights& operator=(const ModelWeights&) = delete;

  static ModelWeights random(const ModelShape& shape, uint64_t seed);
  // Reads every tensor (F32, exact shape). Throws InputError naming the file and the tensor that is
  // missing or has the wrong dtype or shape.
  static ModelWeights load(const ModelShape& shape, const std::string& path);
  // Writes every tensor as F32. Throws InputError when the file cannot be written.
  void save(const std::string& path) const;

  // l in [0, layers + mtp_layers): the MTP layer's decoder weights are layer(layers).
  const LayerWeights& layer(int32_t l) const { return layers_[static_cast<size_t>(l)]; }
  const MtpWeights& mtp() const { return mtp_; }  // null pointers without an MTP layer
  const float* embed() const { return embed_; }
  const float* final_norm() const { return final_norm_; }
  const float* lm_head() const { return lm_head_; }
  const std::vector<TensorSpec>& specs() const { return specs_; }
  std::vector<float>& tensor(size_t i) { return data_[i]; }  // tests: corrupt or inspect one tensor

 private:
  explicit ModelWeights(const ModelShape& shape);
  void bind();  // resolves the pointers after data_ is filled

  ModelShape shape_;
  std::vector<TensorSpec> specs_;
  std::vector<std::vector<float>> data_;  // parallel to specs_
  std::vector<LayerWeights> layers_;
  MtpWeights mtp_;
  const float *embed_ = nullptr, *final_norm_ = nullptr, *lm_head_ = nullptr;
};

}  // namespace tokenline
