#include "engine/runtime/model_weights.h"

#include <cmath>
#include <cstring>
#include <map>

#include "kernels/pcg_draw.h"
#include "kernels/safetensors.h"

namespace tokenline {
namespace {

constexpr float kNormJitter = 0.1f;  // norm weights drawn in 1 +- 0.1: near identity, not exactly it

bool is_norm(const std::string& name) {
  return name.find("norm") != std::string::npos || name.find("bias") != std::string::npos;
}

std::string layer_prefix(int32_t l) {
  return "model.layers." + std::to_string(l) + ".";
}

// A GQA model's mixer tensors: GQA attention (transformers' q_proj / k_proj / v_proj / o_proj, q_norm,
// k_norm, gpt-oss's sinks) or Gated DeltaNet (Qwen3.5's linear_attn.*).
void add_gqa_mixer(std::vector<TensorSpec>& out, const ModelShape& s, int32_t l) {
  const std::string p = layer_prefix(l);
  const int64_t h = s.hidden, hd = s.head_dim;
  if (s.mixer(l) == LayerMixer::kGatedDeltaNet) {
    const GdnDims& g = s.gdn;
    const std::string a = p + "linear_attn.";
    const int64_t v_dim = int64_t{g.value_heads} * g.value_dim;
    out.push_back({a + "in_proj_qkv.weight", {g.conv_channels(), h}});
    out.push_back({a + "in_proj_z.weight", {v_dim, h}});
    out.push_back({a + "in_proj_b.weight", {g.value_heads, h}});
    out.push_back({a + "in_proj_a.weight", {g.value_heads, h}});
    out.push_back({a + "conv1d.weight", {g.conv_channels(), g.conv_kernel}});
    out.push_back({a + "A_log", {g.value_heads}});
    out.push_back({a + "dt_bias", {g.value_heads}});
    out.push_back({a + "norm.weight", {g.value_dim}});
    out.push_back({a + "out_proj.weight", {h, v_dim}});
    return;
  }
  const int64_t q_rows = int64_t{s.heads} * hd * (s.attn_output_gate ? 2 : 1);
  out.push_back({p + "self_attn.q_proj.weight", {q_rows, h}});
  out.push_back({p + "self_attn.k_proj.weight", {int64_t{s.kv_heads} * hd, h}});
  out.push_back({p + "self_attn.v_proj.weight", {int64_t{s.kv_heads} * hd, h}});
  out.push_back({p + "self_attn.o_proj.weight", {h, int64_t{s.heads} * hd}});
  if (s.qk_norm) {
    out.push_back({p + "self_attn.q_norm.weight", {hd}});
    out.push_back({p + "self_attn.k_norm.weight", {hd}});
  }
  if (s.attention_sinks) out.push_back({p + "self_attn.sinks", {s.heads}});
}

void add_layer(std::vector<TensorSpec>& out, const ModelShape& s, int32_t l) {
  const std::string p = layer_prefix(l);
  const int64_t h = s.hidden, q_out = int64_t{s.heads} * (s.nope + s.rope);
  out.push_back({p + "input_layernorm.weight", {h}});
  out.push_back({p + "post_attention_layernorm.weight", {h}});
  if (s.gqa) {
    add_gqa_mixer(out, s, l);
  } else {
    out.push_back({p + "self_attn.q_a_proj.weight", {s.q_lora, h}});
    out.push_back({p + "self_attn.q_a_layernorm.weight", {s.q_lora}});
    out.push_back({p + "self_attn.q_b_proj.weight", {q_out, s.q_lora}});
    out.push_back({p + "self_attn.kv_a_proj_with_mqa.weight", {s.kv_lora + s.rope, h}});
    out.push_back({p + "self_attn.kv_a_layernorm.weight", {s.kv_lora}});
    out.push_back({p + "self_attn.kv_b_proj.weight", {int64_t{s.heads} * (s.nope + s.v), s.kv_lora}});
    out.push_back({p + "self_attn.o_proj.weight", {h, int64_t{s.heads} * s.v}});
    if (s.indexer_full[static_cast<size_t>(l)] != 0) {
      out.push_back({p + "self_attn.indexer.wq_b.weight", {int64_t{s.idx_heads} * s.idx_dim, s.q_lora}});
      out.push_back({p + "self_attn.indexer.wk.weight", {s.idx_dim, h}});
      out.push_back({p + "self_attn.indexer.k_norm.weight", {s.idx_dim}});
      out.push_back({p + "self_attn.indexer.k_norm.bias", {s.idx_dim}});
      out.push_back({p + "self_attn.indexer.weights_proj.weight", {s.idx_heads, h}});
    }
  }
  if (!s.is_moe_layer(l)) {
    out.push_back({p + "mlp.gate_up_proj.weight", {2 * int64_t{s.dense_inter}, h}});
    out.push_back({p + "mlp.down_proj.weight", {h, s.dense_inter}});
    return;
  }
  const int64_t shared_inter = int64_t{s.moe_inter} * s.shared_experts;
  out.push_back({p + "mlp.gate.weight", {s.experts, h}});
  if (s.router_bias) out.push_back({p + "mlp.gate.e_score_correction_bias", {s.experts}});
  out.push_back({p + "mlp.experts.gate_up_proj", {s.experts, 2 * int64_t{s.moe_inter}, h}});
  out.push_back({p + "mlp.experts.down_proj", {s.experts, h, s.moe_inter}});
  if (shared_inter == 0) return;
  out.push_back({p + "mlp.shared_experts.gate_up_proj.weight", {2 * shared_inter, h}});
  out.push_back({p + "mlp.shared_experts.down_proj.weight", {h, shared_inter}});
}

}  // namespace

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<TensorSpec> checkpoint_tensors(const ModelShape& s) {
  std::vector<TensorSpec> out;
  out.push_back({"model.embed_tokens.weight", {s.vocab, s.hidden}});
  for (int32_t l = 0; l < s.layers; ++l) add_layer(out, s, l);
  out.push_back({"model.norm.weight", {s.hidden}});
  out.push_back({"lm_head.weight", {s.vocab, s.hidden}});
  if (s.mtp_layers > 0) {  // after the main model, so that adding it left the main tensors' seeds alone
    const std::string p = layer_prefix(s.layers);
    add_layer(out, s, s.layers);
    out.push_back({p + "eh_proj.weight", {s.hidden, 2 * int64_t{s.hidden}}});
    out.push_back({p + "enorm.weight", {s.hidden}});
    out.push_back({p + "hnorm.weight", {s.hidden}});
    out.push_back({p + "shared_head.norm.weight", {s.hidden}});
  }
  return out;
}

ModelWeights::ModelWeights(const ModelShape& shape) : shape_(shape), specs_(checkpoint_tensors(shape)) {
  data_.resize(specs_.size());
}

void ModelWeights::bind() {
  std::map<std::string, const float*> by_name;
  for (size_t i = 0; i < specs_.size(); ++i) by_name[specs_[i].name] = data_[i].data();
  auto get = [&](const std::string& name) {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  embed_ = get("model.embed_tokens.weight");
  final_norm_ = get("model.norm.weight");
  lm_head_ = get("lm_head.weight");
  layers_.clear();
  for (int32_t l = 0; l < shape_.layers + shape_.mtp_layers; ++l) {
    const std::string p = layer_prefix(l);
    layers_.push_back(LayerWeights{get(p + "input_layernorm.weight"),
                                   get(p + "post_attention_layernorm.weight"),
                                   get(p + "self_attn.q_a_proj.weight"),
                                   get(p + "self_attn.q_a_layernorm.weight"),
                                   get(p + "self_attn.q_b_proj.weight"),
                                   get(p + "self_attn.kv_a_proj_with_mqa.weight"),
                                   get(p + "self_attn.kv_a_layernorm.weight"),
                                   get(p + "self_attn.kv_b_proj.weight"),
                                   get(p + "self_attn.o_proj.weight"),
                                   get(p + "self_attn.indexer.wq_b.weight"),
                                   get(p + "self_attn.indexer.wk.weight"),
                                   get(p + "self_attn.indexer.k_norm.weight"),
                                   get(p + "self_attn.indexer.k_norm.bias"),
                                   get(p + "self_attn.indexer.weights_proj.weight"),
                                   get(p + "mlp.gate_up_proj.weight"),
                                   get(p + "mlp.down_proj.weight"),
                                   get(p + "mlp.gate.weight"),
                                   get(p + "mlp.gate.e_score_correction_bias"),
                                   get(p + "mlp.experts.gate_up_proj"),
                                   get(p + "mlp.experts.down_proj"),
                                   get(p + "mlp.shared_experts.gate_up_proj.weight"),
                                   get(p + "mlp.shared_experts.down_proj.weight")});
    LayerWeights& lw = layers_.back();
    lw.q_proj = get(p + "self_attn.q_proj.weight");
    lw.k_proj = get(p + "self_attn.k_proj.weight");
    lw.v_proj = get(p + "self_attn.v_proj.weight");
    lw.q_norm = get(p + "self_attn.q_norm.weight");
    lw.k_norm = get(p + "self_attn.k_norm.weight");
    lw.sinks = get(p + "self_attn.sinks");
    const std::string a = p + "linear_attn.";
    lw.gdn_qkv = get(a + "in_proj_qkv.weight");
    lw.gdn_z = get(a + "in_proj_z.weight");
    lw.gdn_b = get(a + "in_proj_b.weight");
    lw.gdn_a = get(a + "in_proj_a.weight");
    lw.gdn_conv = get(a + "conv1d.weight");
    lw.gdn_a_log = get(a + "A_log");
    lw.gdn_dt_bias = get(a + "dt_bias");
    lw.gdn_norm = get(a + "norm.weight");
    lw.gdn_out = get(a + "out_proj.weight");
  }
  const std::string m = layer_prefix(shape_.layers);
  mtp_ = MtpWeights{get(m + "eh_proj.weight"), get(m + "enorm.weight"), get(m + "hnorm.weight"),
                    get(m + "shared_head.norm.weight")};
}

ModelWeights ModelWeights::random(const ModelShape& shape, uint64_t seed) {
  ModelWeights w(shape);
  for (size_t i = 0; i < w.specs_.size(); ++i) {
    const TensorSpec& spec = w.specs_[i];
    Pcg32State rng = pcg32_seed(seed, i);
    const bool norm = is_norm(spec.name);
    const float bound = norm ? kNormJitter : 1.0f / std::sqrt(static_cast<float>(spec.shape.back()));
    std::vector<float>& t = w.data_[i];
    t.resize(static_cast<size_t>(spec.elements()));
    const bool bias = spec.name.find("bias") != std::string::npos;
    for (float& v : t) v = (norm && !bias ? 1.0f : 0.0f) + bound * (2.0f * pcg32_uniform01(rng) - 1.0f);
  }
  w.bind();
  return w;
}

ModelWeights ModelWeights::load(const ModelShape& shape, const std::string& path) {
  ModelWeights w(shape);
  const SafetensorsReader reader(path);
  for (size_t i = 0; i < w.specs_.size(); ++i) {
    const TensorSpec& spec = w.specs_[i];
    const TensorInfo& info = reader.require(spec.name, DType::kF32, spec.shape);
    w.data_[i].resize(static_cast<size_t>(spec.elements()));
    std::memcpy(w.data_[i].data(), reader.data(info), static_cast<size_t>(info.size_bytes));
  }
  w.bind();
  return w;
}

void ModelWeights::save(const std::string& path) const {
  std::vector<TensorToWrite> tensors;
  for (size_t i = 0; i < specs_.size(); ++i)
    tensors.push_back({specs_[i].name, DType::kF32, specs_[i].shape, data_[i].data()});
  write_safetensors(path, tensors, {{"format", "pt"}, {"model", shape_.name}});
}

}  // namespace tokenline
