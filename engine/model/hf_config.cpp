// Hugging Face config.json -> ModelConfig. nlohmann stays in this file.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "common/input_error.h"
#include "common/json_depth.h"
#include "engine/model/hf_quant_config.h"
#include "engine/model/model_config.h"

namespace tokenline {
namespace {

using nlohmann::json;

class Reader {
 public:
  // prefix: where the text model sits in the file ("text_config." in a wrapper, else "").
  Reader(const json& j, std::string path, std::string prefix = "")
      : j_(j), path_(std::move(path)), prefix_(std::move(prefix)) {}

  int64_t integer(const char* field) const {
    auto it = j_.find(field);
    if (it == j_.end()) throw InputError(where(field), "an integer field", "no such field");
    if (!it->is_number_integer()) throw InputError(where(field), "an integer", it->dump());
    return it->get<int64_t>();
  }
  int64_t integer_or(const char* field, int64_t fallback) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return fallback;
    return integer(field);
  }
  std::string string_or(const char* field, const std::string& fallback) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_string()) throw InputError(where(field), "a string", it->dump());
    return it->get<std::string>();
  }
  bool boolean_or(const char* field, bool fallback) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw InputError(where(field), "true or false", it->dump());
    return it->get<bool>();
  }
  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }
  // A nested object's reader (MiniMax-M3's sparse_attention_config), its fields named under it; InputError
  // when the field is not an object. The returned reader refers into this one's document.
  Reader object(const char* field) const {
    auto it = j_.find(field);
    if (it == j_.end() || !it->is_object()) {
      throw InputError(where(field), "an object",
                       it == j_.end() ? std::string("no such field") : it->dump().substr(0, 80));
    }
    return Reader(*it, path_, prefix_ + field + ".");
  }
  // "file: text_config.field": the location a message names.
  std::string where(std::string_view field) const { return path_ + ": " + prefix_ + std::string(field); }

 private:
  const json& j_;
  std::string path_;
  std::string prefix_;
};

constexpr int64_t kMaxCount = int64_t{1} << 30;  // a count the int fields hold with room to multiply

int to_int(int64_t v, const Reader& r, const char* field) {
  if (v < 0 || v > kMaxCount)
    throw InputError(r.where(field), "a count 0 .. " + std::to_string(kMaxCount), std::to_string(v));
  return static_cast<int>(v);
}

// index_full_layers (tokenline's own field; not in upstream configs): a count of scoring layers, or the
// list of their indices. Absent: every layer scores (DeepSeek-V3.2).
int indexer_full_layers(const Reader& r, int layers) {
  auto it = r.raw().find("index_full_layers");
  if (it == r.raw().end() || it->is_null()) return layers;
  if (it->is_number_integer()) return to_int(it->get<int64_t>(), r, "index_full_layers");
  if (it->is_array()) return static_cast<int>(it->size());
  throw InputError(r.where("index_full_layers"), "a count or a list of layer indices", it->dump());
}

// GLM-5.2's IndexShare, as its published config.json writes it: which layers run their own indexer ("full")
// and which reuse the previous full layer's top-k ("shared"). In the order transformers' GlmMoeDsaConfig and
// vLLM (models/deepseek_v32, GlmMoeDsaForCausalLM) read them: indexer_types, one "full" / "shared" per
// layer; else index_topk_pattern, one character per layer ('S' shared); else index_topk_freq with
// index_skip_topk_offset (default 2): layer l shares when max(l - offset + 1, 0) % freq != 0 (GLM-5.2: freq
// 4, offset 3, so layers 0, 1, 2, 6, 10, ..., 74 score: 21 of 78). Empty when the config writes none of
// them, or freq 1 (every layer scores): index_full_layers then decides.
std::vector<bool> indexer_schedule(const Reader& r, int layers) {
  std::vector<bool> full;
  auto types = r.raw().find("indexer_types");
  auto pattern = r.raw().find("index_topk_pattern");
  if (types != r.raw().end() && !types->is_null()) {
    if (!types->is_array() || types->size() != size_t(layers))
      throw InputError(r.where("indexer_types"),
                       "\"full\" or \"shared\" per layer (" + std::to_string(layers) + ")",
                       types->is_array() ? std::to_string(types->size()) + " entries" : types->dump());
    for (size_t i = 0; i < types->size(); ++i) {
      const json& t = (*types)[i];
      if (t != "full" && t != "shared")
        throw InputError(r.where("indexer_types[" + std::to_string(i) + "]"), "\"full\" or \"shared\"",
                         t.dump());
      full.push_back(t == "full");
    }
  } else if (pattern != r.raw().end() && !pattern->is_null()) {
    if (!pattern->is_string() || pattern->get<std::string>().size() != size_t(layers))
      throw InputError(r.where("index_topk_pattern"),
                       "one character per layer (" + std::to_string(layers) + "), 'S' for a shared layer",
                       pattern->dump());
    for (const char ch : pattern->get<std::string>()) full.push_back(ch != 'S');
  } else {
    const int64_t freq = r.integer_or("index_topk_freq", 1);
    const int64_t offset = r.integer_or("index_skip_topk_offset", 2);
    if (freq < 1) throw InputError(r.where("index_topk_freq"), "a layer spacing >= 1", std::to_string(freq));
    if (freq == 1) return full;
    for (int64_t l = 0; l < layers; ++l) full.push_back(std::max<int64_t>(l - offset + 1, 0) % freq == 0);
  }
  if (!full.empty() && !full.front()) {
    throw InputError(
        r.where(types != r.raw().end() && !types->is_null() ? "indexer_types[0]" : "index_topk_pattern"),
        "a first layer that runs its own indexer (a shared layer reuses an earlier one's top-k)",
        "a shared first layer");
  }
  return full;
}

// DeepSeek-V3's MoE (also GLM's): n_routed_experts of moe_intermediate_size, top num_experts_per_tok, plus
// n_shared_experts; the first first_k_dense_replace layers dense; MTP layers.
void read_deepseek_moe(const Reader& r, ModelConfig& c) {
  c.routed_experts = to_int(r.integer("n_routed_experts"), r, "n_routed_experts");
  c.experts_per_token = to_int(r.integer("num_experts_per_tok"), r, "num_experts_per_tok");
  c.shared_experts = to_int(r.integer_or("n_shared_experts", 0), r, "n_shared_experts");
  c.moe_intermediate = r.integer("moe_intermediate_size");
  c.dense_layers = to_int(r.integer_or("first_k_dense_replace", 0), r, "first_k_dense_replace");
  c.mtp_layers = to_int(r.integer_or("num_nextn_predict_layers", 0), r, "num_nextn_predict_layers");
}

// MLA's shape (DeepSeek-V3's field names, also Kimi Linear's), BF16 KV by default.
void read_mla_shape(const Reader& r, ModelConfig& c) {
  c.attention = AttentionKind::kMla;
  c.q_lora_rank = r.integer_or("q_lora_rank", 0);
  c.kv_lora_rank = r.integer("kv_lora_rank");
  c.qk_nope_head_dim = r.integer("qk_nope_head_dim");
  c.qk_rope_head_dim = r.integer("qk_rope_head_dim");
  c.v_head_dim = r.integer("v_head_dim");
  c.default_kv_layout = KvLayout::kBf16;
}

void read_mla(const Reader& r, ModelConfig& c) {
  read_mla_shape(r, c);
  read_deepseek_moe(r, c);
}

// DeepSeek-V4 (deepseek_v4, DeepseekV4ForCausalLM: deepseek-ai/DeepSeek-V4-Flash and -Pro): per layer
// compress_ratios (0, 4 or 128; the MTP layer's after the decoder layers'), one head_dim-wide KV head
// (num_key_value_heads 1) of which qk_rope_head_dim carry RoPE, q through q_lora_rank, the output through
// o_groups groups of o_lora_rank, a sliding window of sliding_window tokens on every layer, an indexer
// (index_n_heads x index_head_dim, top index_topk) on the CSA layers, hc_mult residual copies
// (hyper-connections), and DeepSeek's MoE on every layer (no first_k_dense_replace; its first
// num_hash_layers route by a token-id table, the same experts' work).
void read_deepseek_v4(const Reader& r, ModelConfig& c) {
  c.attention = AttentionKind::kCompressed;
  c.kv_heads = to_int(r.integer_or("num_key_value_heads", 1), r, "num_key_value_heads");
  if (c.kv_heads != 1)
    throw InputError(r.where("num_key_value_heads"), "1 (one KV head)", std::to_string(c.kv_heads));
  c.head_dim = r.integer("head_dim");
  c.qk_rope_head_dim = r.integer("qk_rope_head_dim");
  c.q_lora_rank = r.integer("q_lora_rank");
  c.window_tokens = r.integer("sliding_window");
  CompressedAttention& a = c.compressed;
  a.o_lora_rank = r.integer("o_lora_rank");
  a.o_groups = to_int(r.integer("o_groups"), r, "o_groups");
  a.hc_mult = to_int(r.integer_or("hc_mult", 1), r, "hc_mult");
  a.index_heads = to_int(r.integer("index_n_heads"), r, "index_n_heads");
  a.index_head_dim = r.integer("index_head_dim");
  a.index_topk = r.integer("index_topk");
  read_deepseek_moe(r, c);
  auto ratios = r.raw().find("compress_ratios");
  const size_t layers = size_t(c.layers), with_mtp = layers + size_t(c.mtp_layers);
  if (ratios == r.raw().end() || !ratios->is_array() ||
      (ratios->size() != layers && ratios->size() != with_mtp))
    throw InputError(r.where("compress_ratios"),
                     "one of 0, 4 and 128 per layer (" + std::to_string(layers) + ", or " +
                         std::to_string(with_mtp) + " with the MTP layers)",
                     ratios == r.raw().end() ? "no such field"
                     : ratios->is_array()    ? std::to_string(ratios->size()) + " entries"
                                             : ratios->dump());
  for (size_t i = 0; i < ratios->size(); ++i) {
    const json& v = (*ratios)[i];
    if (!v.is_number_integer() || (v != 0 && v != 4 && v != 128))
      throw InputError(r.where("compress_ratios[" + std::to_string(i) + "]"),
                       "0 (window only), 4 (CSA) or 128 (HCA)", v.dump());
    if (i < layers)
      a.ratios.push_back(v.get<int>());
    else if (i == layers)
      a.mtp_ratio = v.get<int>();
  }
  c.default_kv_layout = KvLayout::kFp8DsMla;
}

void read_indexer(const Reader& r, ModelConfig& c) {
  c.indexer_heads = to_int(r.integer("index_n_heads"), r, "index_n_heads");
  c.indexer_head_dim = r.integer("index_head_dim");
  c.indexer_topk = r.integer("index_topk");
  c.indexer_layer_full = indexer_schedule(r, c.layers);
  c.indexer_full_layers =
      c.indexer_layer_full.empty()
          ? indexer_full_layers(r, c.layers)
          : int(std::count(c.indexer_layer_full.begin(), c.indexer_layer_full.end(), true));
  c.default_kv_layout = KvLayout::kFp8DsMla;
}

void read_llama(const Reader& r, ModelConfig& c) {
  c.attention = AttentionKind::kGqa;
  c.kv_heads = to_int(r.integer_or("num_key_value_heads", c.heads), r, "num_key_value_heads");
  c.head_dim = r.integer_or("head_dim", c.heads > 0 ? c.hidden / c.heads : 0);
  c.default_kv_layout = KvLayout::kBf16;
}

// Qwen3-MoE: a layer is dense when listed in mlp_only_layers or skipped by decoder_sparse_step (layer i
// is sparse when (i + 1) % step == 0, as transformers' Qwen3MoeDecoderLayer decides).
int qwen3_dense_layers(const Reader& r, int layers) {
  const int step = to_int(r.integer_or("decoder_sparse_step", 1), r, "decoder_sparse_step");
  if (step < 1) throw InputError(r.where("decoder_sparse_step"), "a step >= 1", std::to_string(step));
  std::vector<bool> dense(static_cast<size_t>(layers), false);
  for (int i = 0; i < layers; ++i) dense[static_cast<size_t>(i)] = (i + 1) % step != 0;
  auto it = r.raw().find("mlp_only_layers");
  if (it != r.raw().end() && !it->is_null()) {
    if (!it->is_array()) throw InputError(r.where("mlp_only_layers"), "a list of layer indices", it->dump());
    for (const json& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= layers) {
        throw InputError(r.where("mlp_only_layers"), "layer indices 0 .. num_hidden_layers - 1", v.dump());
      }
      dense[static_cast<size_t>(v.get<int64_t>())] = true;
    }
  }
  int count = 0;
  for (bool d : dense) count += d ? 1 : 0;
  return count;
}

// Qwen3-MoE: GQA with per-head q/k RMSNorm, routed experts (num_experts, top num_experts_per_tok), no shared
// expert, a router without score bias.
void read_qwen3_moe(const Reader& r, ModelConfig& c) {
  read_llama(r, c);
  c.qk_norm = true;
  c.routed_experts = to_int(r.integer("num_experts"), r, "num_experts");
  c.experts_per_token = to_int(r.integer("num_experts_per_tok"), r, "num_experts_per_tok");
  c.shared_experts = 0;
  c.router_score_bias = false;
  c.moe_intermediate = r.integer("moe_intermediate_size");
  c.dense_layers = qwen3_dense_layers(r, c.layers);
}

// GLM-4.5 / 4.6 (glm4_moe): GQA (its own head_dim, q/k norms when use_qk_norm) with DeepSeek-V3's MoE and
// router (a score-correction bias, noaux_tc).
void read_glm4_moe(const Reader& r, ModelConfig& c) {
  read_llama(r, c);
  c.qk_norm = r.boolean_or("use_qk_norm", false);
  read_deepseek_moe(r, c);
}

// Full attention only: a config whose attention looks at a sliding window shorter than the context is
// refused rather than priced as full attention. Qwen2/Qwen3 switch the window on with use_sliding_window
// (transformers' default false); Mistral/Mixtral with a non-null sliding_window.
void require_full_attention(const Reader& r, const ModelConfig& c, std::string_view type) {
  const bool qwen = type == "qwen2" || type == "qwen3";
  if (qwen) {
    if (r.boolean_or("use_sliding_window", false))
      throw InputError(r.where("use_sliding_window"),
                       "false (tokenline models full attention, not a sliding window)", "true");
    return;
  }
  const int64_t window = r.integer_or("sliding_window", 0);
  if (window > c.max_context_tokens)  // a window the context never fills: a config that contradicts itself
    throw InputError(r.where("sliding_window"),
                     "null or at most max_position_embeddings (" + std::to_string(c.max_context_tokens) + ")",
                     std::to_string(window));
  if (window > 0 && window < c.max_context_tokens)
    throw InputError(r.where("sliding_window"),
                     "null or at least max_position_embeddings (tokenline models full attention, not a "
                     "sliding window)",
                     std::to_string(window));
}

// transformers writes layer_types (one kind per layer) into configs of every family since 4.53; the families
// read here run full attention on every layer (the GDN hybrids read their own list: read_qwen3_next). A kind
// that needs a mechanism tokenline lacks is refused naming it; a kind no family has is refused as unknown.
void require_full_attention_layers(const Reader& r, const ModelConfig& c) {
  auto types = r.raw().find("layer_types");
  if (types == r.raw().end() || types->is_null()) return;
  if (!types->is_array() || types->size() != size_t(c.layers))
    throw InputError(r.where("layer_types"), "a layer kind per layer (" + std::to_string(c.layers) + ")",
                     types->is_array() ? std::to_string(types->size()) + " entries" : types->dump());
  constexpr std::pair<std::string_view, std::string_view> kKnownKinds[] = {
      {"sliding_attention", "sliding-window attention"},
      {"chunked_attention", "chunked local attention"},
      {"linear_attention", "linear attention (Gated DeltaNet)"},
      {"mamba", "Mamba-2 state-space layers"},
  };
  for (size_t i = 0; i < types->size(); ++i) {
    const json& t = (*types)[i];
    if (t == "full_attention") continue;
    // GLM-5.2's configs name their DSA layers so (transformers GlmMoeDsaConfig): the model's own attention.
    if (t == "deepseek_sparse_attention" && c.has_indexer()) continue;
    const std::string field = "layer_types[" + std::to_string(i) + "]";
    for (const auto& [kind, mechanism] : kKnownKinds)
      if (t == kind)
        throw InputError(r.where(field),
                         "full_attention (" + std::string(kind) + " needs " + std::string(mechanism) +
                             ", which tokenline does not model for " + c.hf_model_type + ")",
                         t.dump());
    throw InputError(
        r.where(field),
        "a layer kind: full_attention (sliding_attention, chunked_attention, linear_attention and "
        "mamba in the families that have them)",
        t.dump());
  }
}

// Mixtral: GQA with routed experts (num_local_experts, top num_experts_per_tok) of intermediate_size, no
// shared expert, a router without score bias, every layer sparse.
void read_mixtral(const Reader& r, ModelConfig& c) {
  read_llama(r, c);
  c.routed_experts = to_int(r.integer("num_local_experts"), r, "num_local_experts");
  c.experts_per_token = to_int(r.integer("num_experts_per_tok"), r, "num_experts_per_tok");
  c.shared_experts = 0;
  c.router_score_bias = false;
  c.moe_intermediate = r.integer("intermediate_size");
  c.dense_layers = 0;
}

void read_dsa(const Reader& r, ModelConfig& c) {
  read_mla(r, c);
  read_indexer(r, c);
}

void read_qwen3(const Reader& r, ModelConfig& c) {
  read_llama(r, c);
  c.qk_norm = true;
}

// MiniMax-M2: GQA with q/k RMSNorm, routed experts (num_local_experts of intermediate_size, top
// num_experts_per_tok) and a router with a score-correction bias (use_routing_bias), every layer sparse;
// its MTP modules (use_mtp) are not read: vLLM 0.11 and SGLang serve MiniMax-M2 without them.
// Its q/k norms span every head of a token: vLLM 0.16.0 / 0.18.0 model_executor/models/minimax_m2.py builds
// q_norm / k_norm as MiniMaxText01RMSNormTP(head_dim x total heads) whatever qk_norm_type says
// (transformers' "per_layer"), and SGLang's minimax_m2.py its RMSNormTP likewise.
void read_minimax_m2(const Reader& r, ModelConfig& c) {
  read_mixtral(r, c);
  c.qk_norm = r.boolean_or("use_qk_norm", false);
  c.qk_norm_all_heads = c.qk_norm;
  c.router_score_bias = r.boolean_or("use_routing_bias", false);
  c.shared_experts = 0;
}

// Window layers (docs/layers.md): layer_types as transformers writes it (sliding_attention, chunked_attention
// or full_attention per layer), else the family's own rule (`window_layer`); the window is the config's
// window_field. Every layer is full when the window field is null. A window longer than the context is
// refused by validate_model, naming window_field.
void read_window_layers(const Reader& r, ModelConfig& c, const char* window_field, MixerKind kind,
                        bool (*window_layer)(const Reader&, int layer)) {
  auto w = r.raw().find(window_field);
  if (w == r.raw().end() || w->is_null() || c.layers > (int64_t{1} << 10)) return;  // validate_model: range
  c.window_tokens = r.integer(window_field);
  c.mixers.assign(size_t(c.layers), MixerKind::kAttention);
  auto types = r.raw().find("layer_types");
  if (types == r.raw().end() || types->is_null()) {
    for (int i = 0; i < c.layers; ++i)
      if (window_layer(r, i)) c.mixers[size_t(i)] = kind;
    return;
  }
  const char* window_name = kind == MixerKind::kChunkedAttention ? "chunked_attention" : "sliding_attention";
  if (!types->is_array() || types->size() != size_t(c.layers))
    throw InputError(r.where("layer_types"), "a layer kind per layer (" + std::to_string(c.layers) + ")",
                     types->is_array() ? std::to_string(types->size()) + " entries" : types->dump());
  for (size_t i = 0; i < types->size(); ++i) {
    const json& t = (*types)[i];
    if (t == window_name) {
      c.mixers[i] = kind;
    } else if (t != "full_attention") {
      throw InputError(r.where("layer_types[" + std::to_string(i) + "]"),
                       std::string(window_name) + " or full_attention (" + c.hf_model_type + ")", t.dump());
    }
  }
}

// transformers' GptOssConfig: without layer_types, even layers (0, 2, ...) slide, odd ones are full.
bool gpt_oss_window_layer(const Reader&, int layer) {
  return layer % 2 == 0;
}

// gpt-oss: GQA (head_dim 64, q wider than hidden) and num_local_experts experts of intermediate_size, top
// num_experts_per_tok, a router with a bias (counted as the score bias: one value per expert); sliding-window
// layers of sliding_window tokens (128) alternating with full ones, and a sink logit per head in every
// attention layer (transformers' GptOssAttention.sinks). Its q/k/v/o and expert biases (under 0.1% of the
// weights) are not counted.
void read_gpt_oss(const Reader& r, ModelConfig& c) {
  read_mixtral(r, c);
  c.router_score_bias = true;
  c.attention_sinks = true;
  read_window_layers(r, c, "sliding_window", MixerKind::kSlidingWindow, gpt_oss_window_layer);
}

// The Gated DeltaNet hybrids' layer list (Qwen3-Next, Qwen3.5): Gated DeltaNet on the linear_attention
// layers of layer_types, full attention on the full_attention ones; without layer_types every
// full_attention_interval-th layer is full, as transformers' Qwen3NextConfig builds it. The full layers'
// attention has an output gate on q (attn_output_gate); mtp_num_hidden_layers MTP layers; the recurrent
// state in mamba_ssm_dtype (Qwen3.5 says float32; absent: SGLang's float32, linear_state.h).
void read_gdn_hybrid(const Reader& r, ModelConfig& c) {
  c.attn_output_gate = r.boolean_or("attn_output_gate", true);
  c.mtp_layers = to_int(r.integer_or("mtp_num_hidden_layers", 0), r, "mtp_num_hidden_layers");
  c.gdn = {.key_heads = to_int(r.integer("linear_num_key_heads"), r, "linear_num_key_heads"),
           .value_heads = to_int(r.integer("linear_num_value_heads"), r, "linear_num_value_heads"),
           .key_head_dim = r.integer("linear_key_head_dim"),
           .value_head_dim = r.integer("linear_value_head_dim"),
           .conv_kernel = r.integer("linear_conv_kernel_dim")};
  for (const auto& [v, field] : {std::pair{c.gdn.key_head_dim, "linear_key_head_dim"},
                                 std::pair{c.gdn.value_head_dim, "linear_value_head_dim"},
                                 std::pair{c.gdn.conv_kernel, "linear_conv_kernel_dim"}}) {
    if (v < 1 || v > (int64_t{1} << 16)) throw InputError(r.where(field), "1 .. 65536", std::to_string(v));
  }
  for (const auto& [v, field] : {std::pair{c.gdn.key_heads, "linear_num_key_heads"},
                                 std::pair{c.gdn.value_heads, "linear_num_value_heads"}}) {
    if (v < 1 || v > (1 << 16)) throw InputError(r.where(field), "1 .. 65536", std::to_string(v));
  }
  const std::string ssm = r.string_or("mamba_ssm_dtype", "float32");
  if (ssm != "float32" && ssm != "bfloat16" && ssm != "float16")
    throw InputError(r.where("mamba_ssm_dtype"), "float32, bfloat16 or float16", "'" + ssm + "'");
  c.ssm_state_bytes = ssm == "float32" ? 4 : 2;
  if (c.layers > (int64_t{1} << 10))  // validate_model names the range; the list below is not built first
    return;
  c.mixers.assign(size_t(c.layers), MixerKind::kAttention);
  auto types = r.raw().find("layer_types");
  if (types != r.raw().end() && !types->is_null()) {
    if (!types->is_array() || types->size() != size_t(c.layers))
      throw InputError(r.where("layer_types"), "one of linear_attention / full_attention per layer",
                       types->is_array() ? std::to_string(types->size()) + " entries" : types->dump());
    for (size_t i = 0; i < types->size(); ++i) {
      const json& t = (*types)[i];
      if (t == "linear_attention") {
        c.mixers[i] = MixerKind::kGatedDeltaNet;
      } else if (t != "full_attention") {
        throw InputError(r.where("layer_types[" + std::to_string(i) + "]"),
                         "linear_attention or full_attention", t.dump());
      }
    }
    return;
  }
  const int interval = to_int(r.integer_or("full_attention_interval", 4), r, "full_attention_interval");
  if (interval < 1) throw InputError(r.where("full_attention_interval"), "a count >= 1", "0");
  for (int i = 0; i < c.layers; ++i)
    if ((i + 1) % interval != 0) c.mixers[size_t(i)] = MixerKind::kGatedDeltaNet;
}

// Qwen3-Next / Qwen3.5-MoE: Qwen3-MoE's GQA (q/k norms) and experts plus one shared expert of
// shared_expert_intermediate_size (its 1 x hidden gate not counted), on read_gdn_hybrid's layers.
void read_qwen3_next(const Reader& r, ModelConfig& c) {
  read_qwen3_moe(r, c);
  const int64_t shared = r.integer_or("shared_expert_intermediate_size", 0);
  if (shared > 0 && shared != c.moe_intermediate)
    throw InputError(
        r.where("shared_expert_intermediate_size"),
        "moe_intermediate_size (" + std::to_string(c.moe_intermediate) + ": one shared expert of it)",
        std::to_string(shared));
  c.shared_experts = shared > 0 ? 1 : 0;
  read_gdn_hybrid(r, c);
}

// Qwen3.5 dense (qwen3_5_text, Qwen3.5-27B): Qwen3's GQA and dense MLP on read_gdn_hybrid's layers.
void read_qwen3_5(const Reader& r, ModelConfig& c) {
  read_qwen3(r, c);
  read_gdn_hybrid(r, c);
}

// A field that must be null (or absent) or hold `neutral`: it names a mechanism tokenline does not model.
void refuse_unless(const Reader& r, const char* field, const json& neutral, const std::string& mechanism) {
  auto it = r.raw().find(field);
  if (it == r.raw().end() || it->is_null() || *it == neutral) return;
  throw InputError(r.where(field),
                   (neutral.is_null() ? "null" : neutral.dump() + " or null") + " (" + mechanism +
                       " is not modelled; model_type " + r.string_or("model_type", "") + ")",
                   it->dump());
}

// transformers 4.50 models/gemma3/configuration_gemma3.py Gemma3TextConfig: sliding_window_pattern=6.
constexpr int64_t kGemma3WindowPattern = 6;

// Gemma 3 (transformers 4.50 models/gemma3/modeling_gemma3.py Gemma3DecoderLayer): a layer slides unless
// (layer + 1) is a multiple of sliding_window_pattern (6: five local layers, then a global one).
bool gemma3_window_layer(const Reader& r, int layer) {
  return (layer + 1) % r.integer_or("sliding_window_pattern", kGemma3WindowPattern) != 0;
}

// Gemma 3 text (gemma3_text, and the text_config of a gemma3 wrapper): GQA with its own head_dim (q wider
// than hidden in the 27B model), q/k RMSNorms over head_dim (Gemma3Attention.q_norm / k_norm), a GeGLU MLP
// (Gemma3MLP: gate, up and down projections, the same three matrices as SwiGLU), embeddings tied by default.
// Window layers: layer_types (transformers >= 4.53 writes it), else sliding_window_pattern's rule; W =
// sliding_window (1024 in the published checkpoints). Its four norms per layer (pre- and post-attention,
// pre- and post-FFN) are counted as two (2 x hidden per layer: 0.002% of the 27B model).
void read_gemma3(const Reader& r, ModelConfig& c) {
  read_llama(r, c);
  c.qk_norm = true;
  const int64_t pattern = r.integer_or("sliding_window_pattern", kGemma3WindowPattern);
  if (pattern < 1 || pattern > kMaxCount)
    throw InputError(r.where("sliding_window_pattern"), "a period >= 1", std::to_string(pattern));
  read_window_layers(r, c, "sliding_window", MixerKind::kSlidingWindow, gemma3_window_layer);
}

// Gemma 4 text (gemma4_text; google/gemma-4-31B-it and -26B-A4B config.json; transformers 5.5
// models/gemma4/modeling_gemma4.py): Gemma 3's layers, with
// - full-attention layers of their own shape (Gemma4TextAttention): head width global_head_dim (else
//   head_dim); with attention_k_eq_v no v_proj (the values are k_proj's output) and
//   num_global_key_value_heads KV heads, else num_key_value_heads;
// - enable_moe_block: beside each layer's dense GeGLU MLP of intermediate_size an MoE of num_experts GeGLU
//   experts of moe_intermediate_size, top top_k_experts, routed by a softmax over a projection of the
//   hidden state (Gemma4TextRouter; its per-expert scale counted as the score bias). The dense MLP is
//   counted and priced as shared experts of the experts' width, so intermediate_size must be a multiple of
//   moe_intermediate_size (2112 = 3 x 704 in gemma-4-26B-A4B).
// Refused naming the field: KV shared across layers (num_kv_shared_layers), per-layer input embeddings
// (hidden_size_per_layer_input), a double-wide MLP (use_double_wide_mlp), attention over the whole prompt
// both ways (use_bidirectional_attention "all"; "vision" leaves text causal).
void read_gemma4(const Reader& r, ModelConfig& c) {
  refuse_unless(r, "num_kv_shared_layers", 0, "KV shared across layers");
  refuse_unless(r, "hidden_size_per_layer_input", 0, "per-layer input embeddings");
  refuse_unless(r, "use_double_wide_mlp", false, "a double-wide MLP");
  if (r.string_or("use_bidirectional_attention", "") == "all")
    throw InputError(r.where("use_bidirectional_attention"),
                     "null or \"vision\" (bidirectional attention over text is not modelled)", "\"all\"");
  read_gemma3(r, c);
  c.full_k_eq_v = r.boolean_or("attention_k_eq_v", false);
  const int64_t global_head_dim = r.integer_or("global_head_dim", 0);
  if (global_head_dim < 0 || global_head_dim > kMaxCount)
    throw InputError(r.where("global_head_dim"), "a head width >= 1 or null",
                     std::to_string(global_head_dim));
  c.full_head_dim = global_head_dim != c.head_dim ? global_head_dim : 0;
  if (c.full_k_eq_v)
    c.full_kv_heads =
        to_int(r.integer_or("num_global_key_value_heads", c.kv_heads), r, "num_global_key_value_heads");
  if (!r.boolean_or("enable_moe_block", false)) return;
  c.routed_experts = to_int(r.integer("num_experts"), r, "num_experts");
  c.experts_per_token = to_int(r.integer("top_k_experts"), r, "top_k_experts");
  c.moe_intermediate = r.integer("moe_intermediate_size");
  c.router_score_bias = true;  // Gemma4TextRouter's per_expert_scale: one value per expert
  if (c.moe_intermediate < 1 || c.dense_intermediate % c.moe_intermediate != 0 ||
      c.dense_intermediate / c.moe_intermediate > kMaxCount)
    throw InputError(r.where("intermediate_size"),
                     "a multiple of moe_intermediate_size (" + std::to_string(c.moe_intermediate) +
                         ": the dense MLP beside the experts is counted as shared experts of their width)",
                     std::to_string(c.dense_intermediate));
  c.shared_experts = int(c.dense_intermediate / c.moe_intermediate);
  c.dense_layers = 0;
}

// MiMo (mimo; XiaomiMiMo/MiMo-7B-Base config.json, vLLM model_executor/models/mimo.py and mimo_mtp.py):
// Qwen2's decoder and num_nextn_predict_layers MTP layers (each an input projection of the token's
// embedding and the hidden state, 2 x hidden -> hidden, and a Qwen2 decoder layer: the MTP layer of
// DeepSeek-V3's shape with a dense MLP). use_sliding_window false: every layer full.
void read_mimo(const Reader& r, ModelConfig& c) {
  refuse_unless(r, "use_sliding_window", false, "Qwen2's sliding-window layers");
  read_llama(r, c);
  c.mtp_layers = to_int(r.integer_or("num_nextn_predict_layers", 0), r, "num_nextn_predict_layers");
}

// A per-layer 0 / 1 list of num_hidden_layers entries (MiMo-V2-Flash's hybrid_layer_pattern, moe_layer_freq).
std::vector<bool> layer_flags(const Reader& r, const char* field, int layers) {
  auto it = r.raw().find(field);
  if (it == r.raw().end() || it->is_null())
    throw InputError(r.where(field), "a 0 or 1 per layer (" + std::to_string(layers) + ")", "no such field");
  const json& v = *it;
  if (!v.is_array() || v.size() != size_t(layers))
    throw InputError(r.where(field), "a 0 or 1 per layer (" + std::to_string(layers) + ")",
                     v.is_array() ? std::to_string(v.size()) + " entries" : v.dump());
  std::vector<bool> flags;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != 0 && v[i] != 1)
      throw InputError(r.where(std::string(field) + "[" + std::to_string(i) + "]"), "0 or 1", v[i].dump());
    flags.push_back(v[i] == 1);
  }
  return flags;
}

// moe_layer_freq, a 0 / 1 per layer (MiMo-V2-Flash, MiniMax-M3): the MoE on the layers of 1, a dense MLP on
// the others (dense_layers their count).
void read_moe_layer_freq(const Reader& r, ModelConfig& c) {
  const std::vector<bool> moe = layer_flags(r, "moe_layer_freq", c.layers);
  c.ffns.assign(size_t(c.layers), FfnKind::kDense);
  c.dense_layers = 0;
  for (size_t i = 0; i < moe.size(); ++i) {
    if (moe[i]) c.ffns[i] = FfnKind::kMoe;
    c.dense_layers += moe[i] ? 0 : 1;
  }
}

// MiMo-V2-Flash (mimo_v2_flash; XiaomiMiMo/MiMo-V2-Flash config.json; vLLM model_executor/models/
// mimo_v2_flash.py): GQA whose query-key heads are head_dim wide (192) and values v_head_dim (128);
// hybrid_layer_pattern[i] 1: a sliding-window layer of sliding_window tokens (128) with
// swa_num_key_value_heads KV heads (8) and a learned sink logit per head (add_swa_attention_sink_bias), 0: a
// full layer with num_key_value_heads (4); moe_layer_freq[i] 1: DeepSeek-V3's MoE (n_routed_experts of
// moe_intermediate_size, top num_experts_per_tok, a sigmoid router with a score-correction bias,
// n_shared_experts, null: none), 0: a dense MLP of intermediate_size. The window layers' shape is the
// model's (kv_heads), the full layers' their own (full_kv_heads), as Gemma 4's. Sinks are counted and priced
// on every attention layer (the full layers' 64 parameters and one exp per query head too many). Window
// layers of other head counts or widths than the full ones (swa_num_attention_heads, swa_head_dim,
// swa_v_head_dim) are refused naming the field.
void read_mimo_v2_flash(const Reader& r, ModelConfig& c) {
  read_llama(r, c);
  c.v_head_dim = r.integer_or("v_head_dim", c.head_dim);
  if (c.v_head_dim == c.head_dim) c.v_head_dim = 0;
  for (const auto& [field, want] :
       {std::pair{"swa_num_attention_heads", int64_t{c.heads}}, std::pair{"swa_head_dim", c.head_dim},
        std::pair{"swa_v_head_dim", c.gqa_value_dim(false)}}) {
    const int64_t got = r.integer_or(field, want);
    if (got != want)
      throw InputError(r.where(field),
                       std::to_string(want) +
                           " (window layers of another head count or width than the full "
                           "ones are not modelled)",
                       std::to_string(got));
  }
  const int full_kv = c.kv_heads;
  c.kv_heads = to_int(r.integer_or("swa_num_key_value_heads", full_kv), r, "swa_num_key_value_heads");
  c.full_kv_heads = full_kv != c.kv_heads ? full_kv : 0;
  c.attention_sinks = r.boolean_or("add_swa_attention_sink_bias", false) ||
                      r.boolean_or("add_full_attention_sink_bias", false);
  const std::vector<bool> window = layer_flags(r, "hybrid_layer_pattern", c.layers);
  c.window_tokens = r.integer("sliding_window");
  c.mixers.assign(size_t(c.layers), MixerKind::kAttention);
  for (size_t i = 0; i < window.size(); ++i)
    if (window[i]) c.mixers[i] = MixerKind::kSlidingWindow;
  read_deepseek_moe(r, c);  // its dense layers where moe_layer_freq says, not first_k_dense_replace
  read_moe_layer_freq(r, c);
}

// MiniMax-M3 (minimax_m3, MiniMaxAI/MiniMax-M3 config.json's text_config; vLLM vllm/models/minimax_m3,
// TensorRT-LLM _torch/models/modeling_minimaxm3.py; docs/layers.md "MiniMax-M3"): GQA (per-head q/k
// Gemma RMSNorms where qk_norm_type is per_head, MiniMax-M2's all-head norms where per_layer; partial RoPE,
// not priced), moe_layer_freq[i] 1: num_local_experts experts of moe_intermediate_size (else
// intermediate_size), top num_experts_per_tok, a sigmoid router with a score bias (use_routing_bias), and
// n_shared_experts shared experts of shared_intermediate_size; 0: a dense MLP of dense_intermediate_size.
// sparse_attention_config.sparse_attention_freq[i] 1: a block-sparse layer (BlockSparseShape); its
// sparse_disable_index_value[i] must be 1 (an index-value projection is not modelled); sparse_init_block and
// sparse_local_block are among the top-k blocks (vLLM's MiniMaxM3Indexer forces them into the selection).
// MTP: num_nextn_predict_layers (the config's num_mtp_modules are the checkpoint's draft modules; vLLM's
// minimax_m3 mtp.py runs num_nextn_predict_layers of them).
void read_minimax_m3(const Reader& r, ModelConfig& c) {
  read_llama(r, c);
  const std::string norm_type = r.string_or("qk_norm_type", "per_head");
  if (norm_type != "per_head" && norm_type != "per_layer")
    throw InputError(r.where("qk_norm_type"), "\"per_head\" or \"per_layer\"", norm_type);
  c.qk_norm = r.boolean_or("use_qk_norm", false);
  c.qk_norm_all_heads = c.qk_norm && norm_type == "per_layer";
  c.attn_output_gate = r.boolean_or("attention_output_gate", false);
  c.routed_experts = to_int(r.integer("num_local_experts"), r, "num_local_experts");
  c.experts_per_token = to_int(r.integer("num_experts_per_tok"), r, "num_experts_per_tok");
  c.moe_intermediate = r.integer_or("moe_intermediate_size", r.integer("intermediate_size"));
  c.router_score_bias = r.boolean_or("use_routing_bias", false);
  c.dense_intermediate = r.integer_or("dense_intermediate_size", r.integer("intermediate_size"));
  c.mtp_layers = to_int(r.integer_or("num_nextn_predict_layers", 0), r, "num_nextn_predict_layers");
  // Shared experts as tokenline counts them: experts of moe_intermediate_size each.
  const int64_t shared = r.integer_or("n_shared_experts", 0);
  const int64_t shared_width = r.integer_or("shared_intermediate_size", c.moe_intermediate);
  if (shared < 0 || shared > (int64_t{1} << 16))
    throw InputError(r.where("n_shared_experts"), "0 .. 65536", std::to_string(shared));
  if (shared > 0 &&
      (c.moe_intermediate <= 0 || shared_width <= 0 || (shared * shared_width) % c.moe_intermediate != 0))
    throw InputError(r.where("shared_intermediate_size"),
                     "a multiple of moe_intermediate_size (" + std::to_string(c.moe_intermediate) + ")",
                     std::to_string(shared_width));
  c.shared_experts =
      shared > 0 ? to_int(shared * shared_width / c.moe_intermediate, r, "n_shared_experts") : 0;
  if (c.layers > (int64_t{1} << 10)) return;  // validate_model names num_hidden_layers
  read_moe_layer_freq(r, c);
  auto sac = r.raw().find("sparse_attention_config");
  if (sac == r.raw().end() || sac->is_null()) return;
  const Reader s = r.object("sparse_attention_config");
  if (!s.boolean_or("use_sparse_attention", true)) return;
  const std::vector<bool> sparse = layer_flags(s, "sparse_attention_freq", c.layers);
  BlockSparseShape& b = c.block_sparse;
  b.index_heads = to_int(s.integer("sparse_num_index_heads"), s, "sparse_num_index_heads");
  b.index_dim = s.integer_or("sparse_index_dim", c.head_dim);
  b.block_tokens = s.integer("sparse_block_size");
  b.topk_blocks = s.integer("sparse_topk_blocks");
  const int64_t forced = s.integer_or("sparse_init_block", 0) + s.integer_or("sparse_local_block", 0);
  if (forced < 0 || forced > b.topk_blocks)
    throw InputError(
        s.where("sparse_local_block"),
        "init and local blocks 0 .. sparse_topk_blocks (" + std::to_string(b.topk_blocks) + ") in all",
        std::to_string(forced));
  auto disable = s.raw().find("sparse_disable_index_value");
  const std::vector<bool> no_value = disable == s.raw().end() || disable->is_null()
                                         ? sparse
                                         : layer_flags(s, "sparse_disable_index_value", c.layers);
  c.mixers.assign(size_t(c.layers), MixerKind::kAttention);
  for (size_t i = 0; i < sparse.size(); ++i) {
    if (!sparse[i]) continue;
    if (!no_value[i])
      throw InputError(s.where("sparse_disable_index_value[" + std::to_string(i) + "]"),
                       "1 on a sparse layer (an index-value projection is not modelled)", "0");
    c.mixers[i] = MixerKind::kBlockSparse;
  }
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) {
    c.mixers.clear();
    c.block_sparse = {};
  }
}

// Llama 4 (transformers models/llama4/configuration_llama4.py Llama4TextConfig, modeling_llama4.py): a layer
// attends in chunks of attention_chunk_size (chunked_attention) where it uses RoPE, and over the whole
// context where it does not (NoPE: no_rope_layers[i] == 0; without the list every no_rope_layer_interval-th
// layer, 4); layer_types, where written, says the same.
bool llama4_window_layer(const Reader& r, int layer) {
  auto nope = r.raw().find("no_rope_layers");
  if (nope != r.raw().end() && nope->is_array() && !nope->empty()) return (*nope)[size_t(layer)] != 0;
  return (layer + 1) % r.integer_or("no_rope_layer_interval", 4) != 0;
}

// Llama 4 text (llama4_text, the text_config of a llama4 wrapper): GQA (its q/k norm is a weightless L2
// norm), chunked layers (llama4_window_layer), and MoE on the moe_layers (default every
// interleave_moe_layer_step-th layer from step - 1: all 48 of Scout, every other one of Maverick):
// num_local_experts routed experts of intermediate_size, top num_experts_per_tok (1) by a sigmoid router
// without bias, one shared expert of intermediate_size; the other layers a dense MLP of
// intermediate_size_mlp.
void read_llama4(const Reader& r, ModelConfig& c) {
  read_mixtral(r, c);  // Mixtral's expert fields; Llama 4 adds the shared expert and dense layers
  c.shared_experts = 1;
  c.dense_intermediate = r.integer("intermediate_size_mlp");
  if (c.layers > (int64_t{1} << 10)) return;  // validate_model names the range
  auto nope = r.raw().find("no_rope_layers");
  if (nope != r.raw().end() && !nope->is_null()) {
    if (!nope->is_array() || (!nope->empty() && nope->size() < size_t(c.layers)))
      throw InputError(r.where("no_rope_layers"), "a 0 / 1 per layer (" + std::to_string(c.layers) + ")",
                       nope->is_array() ? std::to_string(nope->size()) + " entries" : nope->dump());
    for (const json& v : *nope)
      if (v != 0 && v != 1) throw InputError(r.where("no_rope_layers"), "0 (NoPE) or 1 (RoPE)", v.dump());
  }
  const int64_t interval = r.integer_or("no_rope_layer_interval", 4);
  if (interval < 1 || interval > kMaxCount)
    throw InputError(r.where("no_rope_layer_interval"), "an interval >= 1", std::to_string(interval));
  c.ffns.assign(size_t(c.layers), FfnKind::kDense);
  auto moe = r.raw().find("moe_layers");
  if (moe != r.raw().end() && !moe->is_null()) {
    if (!moe->is_array()) throw InputError(r.where("moe_layers"), "a list of layer indices", moe->dump());
    for (const json& v : *moe) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= c.layers)
        throw InputError(r.where("moe_layers"), "layer indices 0 .. num_hidden_layers - 1", v.dump());
      c.ffns[size_t(v.get<int64_t>())] = FfnKind::kMoe;
    }
  } else {
    const int64_t step = r.integer_or("interleave_moe_layer_step", 1);
    if (step < 1 || step > kMaxCount)
      throw InputError(r.where("interleave_moe_layer_step"), "a step >= 1", std::to_string(step));
    for (int64_t i = step - 1; i < c.layers; i += step) c.ffns[size_t(i)] = FfnKind::kMoe;
  }
  c.dense_layers = 0;
  for (const FfnKind k : c.ffns) c.dense_layers += k == FfnKind::kDense ? 1 : 0;
  read_window_layers(r, c, "attention_chunk_size", MixerKind::kChunkedAttention, llama4_window_layer);
}

// Nemotron-H / Nemotron 3 (nemotron_h; transformers models/nemotron_h, NemotronHConfig 4.57): each of the
// num_hidden_layers blocks is a norm and ONE of a Mamba-2 mixer (M), GQA attention (*), a dense MLP (-) or
// an MoE (E), as hybrid_override_pattern spells it. MLPs and experts are squared-ReLU up / down projections
// (NemotronHMLP: two matrices). The MoE: n_routed_experts of moe_intermediate_size, top num_experts_per_tok
// by a sigmoid router with a score-correction bias, n_shared_experts of moe_shared_expert_intermediate_size
// (counted as that many experts' widths of moe_intermediate_size, so it must be a multiple). Mamba-2:
// mamba_num_heads x mamba_head_dim, ssm_state_size, n_groups, conv_kernel; its state in
// mamba_ssm_cache_dtype (float32 in the published configs, SGLang's default too: linear_state.h).
// Nemotron 3 Super's latent MoE (moe_latent_size; vLLM model_executor/models/nemotron_h.py NemotronHMoE, at
// 00b08dc): the router (gate) and the shared experts read the hidden state; fc1_latent_proj (hidden ->
// latent) feeds the routed experts, whose GEMMs run at the latent width, and fc2_latent_proj (latent ->
// hidden) brings their sum back; both projections are ReplicatedLinear (whole on every GPU). Its MTP:
// num_nextn_predict_layers layers, each the blocks mtp_hybrid_override_pattern spells; "*E" (an attention
// block and an MoE block, with the eh_proj joining embedding and hidden state) is DeepSeek's MTP layer as
// ModelConfig counts it, another pattern is refused naming the field.
// Nemotron-H's blocks as one letter each (M, *, -, E): hybrid_override_pattern, or the list transformers 5
// writes instead (Nemotron 3 Ultra, Nemotron 3.5: layers_block_type / mtp_layers_block_type of "mamba",
// "attention", "mlp", "moe"; configuration_nemotron_h.py, whose num_hidden_layers is the list's length).
// nullopt when the config writes neither.
std::optional<std::string> nemotron_blocks(const Reader& r, const char* pattern_field,
                                           const char* list_field) {
  auto pattern = r.raw().find(pattern_field);
  if (pattern != r.raw().end() && !pattern->is_null()) {
    if (!pattern->is_string())
      throw InputError(r.where(pattern_field), "a string of M, *, - and E, one per layer", pattern->dump());
    return pattern->get<std::string>();
  }
  auto list = r.raw().find(list_field);
  if (list == r.raw().end() || list->is_null()) return std::nullopt;
  if (!list->is_array())
    throw InputError(r.where(list_field), "a list of mamba, attention, mlp and moe, one per block",
                     list->dump());
  std::string blocks;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& t = (*list)[i];
    constexpr std::pair<std::string_view, char> kKinds[] = {
        {"mamba", 'M'}, {"attention", '*'}, {"mlp", '-'}, {"moe", 'E'}};
    const auto* k = std::find_if(std::begin(kKinds), std::end(kKinds),
                                 [&](const auto& kind) { return t.is_string() && t == kind.first; });
    if (k == std::end(kKinds))
      throw InputError(r.where(std::string(list_field) + "[" + std::to_string(i) + "]"),
                       "mamba, attention, mlp or moe", t.dump());
    blocks += k->second;
  }
  return blocks;
}

void read_nemotron_h(const Reader& r, ModelConfig& c) {
  c.moe_latent = r.integer_or("moe_latent_size", 0);
  if (r.raw().contains("moe_latent_size") && !r.raw()["moe_latent_size"].is_null() && c.moe_latent < 1)
    throw InputError(r.where("moe_latent_size"), "a width >= 1 or null", std::to_string(c.moe_latent));
  c.mtp_layers = to_int(r.integer_or("num_nextn_predict_layers", 0), r, "num_nextn_predict_layers");
  if (c.mtp_layers > 0) {
    const std::string mtp =
        nemotron_blocks(r, "mtp_hybrid_override_pattern", "mtp_layers_block_type").value_or("*E");
    if (mtp != "*E")
      throw InputError(
          r.where(r.raw().contains("mtp_layers_block_type") ? "mtp_layers_block_type"
                                                            : "mtp_hybrid_override_pattern"),
          "\"*E\" or null (an MTP layer of one attention and one MoE block; other MTP blocks are "
          "not modelled)",
          "\"" + mtp + "\"");
  }
  read_llama(r, c);
  // Nemotron-H's first configs (4.48, Nemotron-H-56B) name the attention head width attention_head_dim.
  c.head_dim = r.integer_or("head_dim", r.integer_or("attention_head_dim", c.head_dim));
  c.mlp_projections = 2;
  c.mamba = {.heads = to_int(r.integer("mamba_num_heads"), r, "mamba_num_heads"),
             .head_dim = r.integer("mamba_head_dim"),
             .state_size = r.integer("ssm_state_size"),
             .groups = to_int(r.integer("n_groups"), r, "n_groups"),
             .conv_kernel = r.integer("conv_kernel")};
  for (const auto& [v, field] :
       {std::pair{int64_t{c.mamba.heads}, "mamba_num_heads"}, std::pair{c.mamba.head_dim, "mamba_head_dim"},
        std::pair{c.mamba.state_size, "ssm_state_size"}, std::pair{int64_t{c.mamba.groups}, "n_groups"},
        std::pair{c.mamba.conv_kernel, "conv_kernel"}}) {
    if (v < 1 || v > (int64_t{1} << 16)) throw InputError(r.where(field), "1 .. 65536", std::to_string(v));
  }
  const std::string ssm = r.string_or("mamba_ssm_cache_dtype", "float32");
  if (ssm != "float32" && ssm != "bfloat16" && ssm != "float16")
    throw InputError(r.where("mamba_ssm_cache_dtype"), "float32, bfloat16 or float16", "'" + ssm + "'");
  c.ssm_state_bytes = ssm == "float32" ? 4 : 2;
  const std::optional<std::string> written =
      nemotron_blocks(r, "hybrid_override_pattern", "layers_block_type");
  if (!written)
    throw InputError(r.where("hybrid_override_pattern"),
                     "a string of M, *, - and E, one per layer (or layers_block_type)", "no such field");
  const std::string& blocks = *written;
  auto pattern = r.raw().find("hybrid_override_pattern");
  const bool spelled = pattern != r.raw().end() && !pattern->is_null();  // else layers_block_type listed them
  if (blocks.size() != size_t(c.layers))
    throw InputError(r.where(spelled ? "hybrid_override_pattern" : "layers_block_type"),
                     "one of M, *, - and E per layer (" + std::to_string(c.layers) + ")",
                     std::to_string(blocks.size()) + (spelled ? " characters" : " entries"));
  c.mixers.assign(blocks.size(), MixerKind::kNone);
  c.ffns.assign(blocks.size(), FfnKind::kNone);
  for (size_t i = 0; i < blocks.size(); ++i) {
    switch (blocks[i]) {
      case 'M':
        c.mixers[i] = MixerKind::kMamba2;
        break;
      case '*':
        c.mixers[i] = MixerKind::kAttention;
        break;
      case '-':
        c.ffns[i] = FfnKind::kDense;
        break;
      case 'E':
        c.ffns[i] = FfnKind::kMoe;
        break;
      default:
        throw InputError(r.where("hybrid_override_pattern[" + std::to_string(i) + "]"),
                         "M (Mamba-2), * (attention), - (MLP) or E (MoE)",
                         "'" + std::string(1, blocks[i]) + "'");
    }
  }
  c.dense_layers = int(std::count(c.ffns.begin(), c.ffns.end(), FfnKind::kDense));
  if (std::count(c.ffns.begin(), c.ffns.end(), FfnKind::kMoe) == 0) return;
  c.routed_experts = to_int(r.integer("n_routed_experts"), r, "n_routed_experts");
  c.experts_per_token = to_int(r.integer("num_experts_per_tok"), r, "num_experts_per_tok");
  c.moe_intermediate = r.integer("moe_intermediate_size");
  c.router_score_bias = true;
  const int shared = to_int(r.integer_or("n_shared_experts", 0), r, "n_shared_experts");
  const int64_t shared_width = r.integer_or("moe_shared_expert_intermediate_size", c.moe_intermediate);
  if (shared > 0 && (c.moe_intermediate < 1 || shared_width % c.moe_intermediate != 0 ||
                     shared_width / c.moe_intermediate > kMaxCount / shared))
    throw InputError(r.where("moe_shared_expert_intermediate_size"),
                     "a multiple of moe_intermediate_size (" + std::to_string(c.moe_intermediate) + ")",
                     std::to_string(shared_width));
  c.shared_experts = shared > 0 ? int(shared * (shared_width / c.moe_intermediate)) : 0;
}

// Kimi Linear's layer list (linear_attn_config): kda_layers lists the KDA layers, 1-based (the modeling
// code's is_kda_layer(i) tests i + 1; moonshotai/Kimi-Linear-48B-A3B-Instruct: 1, 2, 3, 5, ..., 26 of 27),
// every other layer is MLA; full_attn_layers, where written, must list exactly those others (else the two
// lists disagree and the config is refused naming it).
void read_kda_layers(const Reader& r, const json& lac, ModelConfig& c) {
  auto list = [&](const char* field, bool required) {
    std::vector<bool> marked(size_t(c.layers), false);
    auto it = lac.find(field);
    const std::string where = std::string("linear_attn_config.") + field;
    if (it == lac.end() || it->is_null()) {
      if (required) throw InputError(r.where(where), "a list of 1-based layer numbers", "no such field");
      return std::optional<std::vector<bool>>();
    }
    if (!it->is_array()) throw InputError(r.where(where), "a list of 1-based layer numbers", it->dump());
    for (const json& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > c.layers ||
          marked[size_t(v.get<int64_t>() - 1)])
        throw InputError(r.where(where),
                         "distinct layer numbers 1 .. num_hidden_layers (" + std::to_string(c.layers) +
                             "; the list is 1-based)",
                         v.dump());
      marked[size_t(v.get<int64_t>() - 1)] = true;
    }
    return std::optional<std::vector<bool>>(marked);
  };
  const std::vector<bool> kda = *list("kda_layers", true);
  const std::optional<std::vector<bool>> full = list("full_attn_layers", false);
  c.mixers.assign(size_t(c.layers), MixerKind::kAttention);
  for (size_t i = 0; i < kda.size(); ++i) {
    if (full && (*full)[i] == kda[i])
      throw InputError(r.where("linear_attn_config.full_attn_layers"),
                       "the layers kda_layers leaves out, each once",
                       "layer " + std::to_string(i + 1) + (kda[i] ? " in both" : " in neither"));
    if (kda[i]) c.mixers[i] = MixerKind::kKda;
  }
}

// Kimi Linear (kimi_linear, KimiLinearForCausalLM; moonshotai/Kimi-Linear-48B-A3B-Instruct's config.json and
// modeling_kimi.py) and Kimi-K3 (a kimi_k3 wrapper's text_config, the same class): KDA layers
// (linear_attn_config: num_heads x head_dim, short_conv_kernel_size, use_full_rank_gate; read_kda_layers) and
// DeepSeek-V3's MLA on the others, without RoPE when mla_use_nope (qk_rope_head_dim still sizes q and the
// latent: KimiMLAAttention only skips the rotation) and with an output gate when mla_use_output_gate; the
// MoE of DeepSeek-V3 under Kimi's names (num_experts, num_experts_per_token, num_shared_experts of
// moe_intermediate_size each, first_k_dense_replace dense layers of intermediate_size, a sigmoid router with
// a score-correction bias); routed_expert_hidden_size: the routed experts in that latent width between
// routed_expert_down_proj and routed_expert_up_proj (ModelConfig::moe_latent), with latent_moe_use_norm an
// RMSNorm on the latent sum; attn_res_block_size: block attention residuals (ModelConfig::attn_res_block).
// The recurrent state in float32, as SGLang and vLLM keep it (no dtype field). Refused naming the field:
// moe_layer_freq other than 1, a hidden_act other than silu and situ (SiTU, Kimi-K3's: a gated activation
// of the same three matrices), KDA key heads or widths apart from the value ones.
void read_kimi_linear(const Reader& r, ModelConfig& c) {
  read_mla_shape(r, c);
  r.boolean_or("mla_use_nope", false);  // read for its type: with or without RoPE the same shapes
  c.attn_output_gate = r.boolean_or("mla_use_output_gate", false);
  // num_experts null: a dense model, intermediate_size on every layer (KimiDecoderLayer's KimiMLP).
  c.routed_experts = to_int(r.integer_or("num_experts", 0), r, "num_experts");
  if (c.routed_experts > 0) {
    c.experts_per_token = to_int(r.integer("num_experts_per_token"), r, "num_experts_per_token");
    c.shared_experts = to_int(r.integer_or("num_shared_experts", 0), r, "num_shared_experts");
    c.moe_intermediate = r.integer("moe_intermediate_size");
    c.dense_layers = to_int(r.integer_or("first_k_dense_replace", 0), r, "first_k_dense_replace");
  }
  c.mtp_layers = to_int(r.integer_or("num_nextn_predict_layers", 0), r, "num_nextn_predict_layers");
  c.router_score_bias = true;
  if (const int64_t freq = r.integer_or("moe_layer_freq", 1); freq != 1)
    throw InputError(r.where("moe_layer_freq"), "1 (an MoE on every layer after the dense ones)",
                     std::to_string(freq));
  const std::string act = r.string_or("hidden_act", "silu");
  if (act != "silu" && act != "situ")
    throw InputError(r.where("hidden_act"), "silu or situ (a gated MLP of three matrices)", "'" + act + "'");
  c.moe_latent = c.routed_experts > 0 ? r.integer_or("routed_expert_hidden_size", 0) : 0;
  c.moe_latent_norm = c.moe_latent > 0 && r.boolean_or("latent_moe_use_norm", false);
  c.attn_res_block = to_int(r.integer_or("attn_res_block_size", 0), r, "attn_res_block_size");
  auto lac = r.raw().find("linear_attn_config");
  if (lac == r.raw().end() || lac->is_null()) return;  // every layer MLA (KimiLinearConfig.is_linear_attn)
  if (!lac->is_object()) throw InputError(r.where("linear_attn_config"), "an object", lac->dump());
  auto field = [&](const char* name) { return "linear_attn_config." + std::string(name); };
  auto sized = [&](const char* name) {
    auto it = lac->find(name);
    if (it == lac->end() || it->is_null())
      throw InputError(r.where(field(name)), "an integer field", "no such field");
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > (int64_t{1} << 16))
      throw InputError(r.where(field(name)), "an integer 1 .. 65536", it->dump());
    return it->get<int64_t>();
  };
  auto gate = lac->find("use_full_rank_gate");
  if (gate != lac->end() && !gate->is_null() && !gate->is_boolean())
    throw InputError(r.where(field("use_full_rank_gate")), "true or false", gate->dump());
  c.kda = {.heads = int(sized("num_heads")),
           .head_dim = sized("head_dim"),
           .conv_kernel = sized("short_conv_kernel_size"),
           .full_rank_gate = gate != lac->end() && gate->is_boolean() && gate->get<bool>()};
  for (const auto& [key, shared] :
       {std::pair{"num_k_heads", int64_t{c.kda.heads}}, std::pair{"head_k_dim", c.kda.head_dim}}) {
    auto it = lac->find(key);
    if (it != lac->end() && !it->is_null() && *it != shared)
      throw InputError(r.where(field(key)),
                       std::to_string(shared) +
                           " or null (key heads of the value heads' shape; others are "
                           "not modelled)",
                       it->dump());
  }
  if (c.layers <= (int64_t{1} << 10)) read_kda_layers(r, *lac, c);  // else validate_model names the range
}

bool reads_own_layer_types(void (*read)(const Reader&, ModelConfig&)) {
  // The window families (gemma3/4, llama4) are not listed: with their window field null, a layer_types that
  // still names window layers contradicts it and is refused by require_full_attention_layers.
  return read == read_qwen3_next || read == read_qwen3_5 || read == read_nemotron_h ||
         read == read_kimi_linear;
}

// How each family names its expert modules (ModuleNaming: what quantization exclusion lists match).
constexpr ModuleNaming kDeepseekNames{};
// DeepSeek-V4's checkpoints name their modules as its reference code does: layers.N.attn.*, layers.N.ffn.*
// (experts w1 / w3 / w2), mtp.N.* (nvidia/DeepSeek-V4-Flash-NVFP4's quantized_layers: layers.N.ffn.experts).
constexpr ModuleNaming kDeepseekV4Names{.layers = "layers.",
                                        .mtp = "mtp.",
                                        .experts = "ffn.experts.0.",
                                        .expert_projs = {{{"w1", 1.0 / 3}, {"w3", 1.0 / 3}, {"w2", 1.0 / 3}}},
                                        .shared = "ffn.shared_experts.",
                                        .attention = "attn.",
                                        .mlp = "ffn."};
constexpr ModuleNaming kQwenNames{.mtp = "mtp.layers.", .shared = "mlp.shared_expert."};
constexpr ModuleNaming kQwen35Names{
    .layers = "model.language_model.layers.", .mtp = "mtp.layers.", .shared = "mlp.shared_expert."};
constexpr ModuleNaming kMixtralNames{.experts = "block_sparse_moe.experts.0.",
                                     .expert_projs = {{{"w1", 1.0 / 3}, {"w3", 1.0 / 3}, {"w2", 1.0 / 3}}},
                                     .shared = ""};
// Llama 4 (transformers' Llama4ForConditionalGeneration): language_model.model.layers.N.feed_forward.*.
constexpr ModuleNaming kLlama4Names{
    .layers = "language_model.model.layers.",
    .experts = "feed_forward.experts.",
    .expert_projs = {{{"gate_up_proj", 2.0 / 3}, {"down_proj", 1.0 / 3}, {"", 0}}},
    .shared = "feed_forward.shared_expert.",
    .mlp = "feed_forward."};
// Nemotron-H: every block's one module is backbone.layers.N.mixer (Mamba-2, attention, MLP or MoE), as
// ModelOpt's exclude_modules name them (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4).
constexpr ModuleNaming kNemotronHNames{.layers = "backbone.layers.",
                                       .experts = "mixer.experts.0.",
                                       .expert_projs = {{{"up_proj", 0.5}, {"down_proj", 0.5}, {"", 0}}},
                                       .shared = "mixer.shared_experts.",
                                       .attention = "mixer.",
                                       .mlp = "mixer."};
constexpr ModuleNaming kGemmaNames{.layers = "language_model.model.layers."};
// Kimi Linear (modeling_kimi.py; the 48B checkpoint's tensors): model.layers.N.self_attn.* (KDA and MLA
// alike), mlp.* on the dense layers, block_sparse_moe.experts.E.w1 / w3 / w2,
// block_sparse_moe.shared_experts.*. Kimi-K3's wrapper puts language_model. before model.layers.; its ignore
// list's regexes begin with .*, so they match either way. Its latent projections
// (block_sparse_moe.routed_expert_down_proj / _up_proj), which the ignore list does not name, are left out of
// the quantized modules: vLLM's Kimi-K3 model builds them as ReplicatedLinear with quant_config=None and
// aiconfigurator's (095f58a, sdk/models/kimi_k3.py) prices them as BF16 GEMMs, so the checkpoint holds them
// in BF16.
constexpr ModuleNaming kKimiLinearNames{.experts = "block_sparse_moe.experts.0.",
                                        .expert_projs = {{{"w1", 1.0 / 3}, {"w3", 1.0 / 3}, {"w2", 1.0 / 3}}},
                                        .shared = "block_sparse_moe.shared_experts.",
                                        .latent_projs = {{"", ""}}};
// Gemma 4 (transformers 5.5 Gemma4ForConditionalGeneration): model.language_model.layers.N.*, as
// nvidia/Gemma-4-31B-IT-NVFP4's exclude_modules name them; the MoE's fused experts (experts.gate_up_proj,
// experts.down_proj) and its dense MLP (mlp.*, counted as the shared experts).
constexpr ModuleNaming kGemma4Names{
    .layers = "model.language_model.layers.",
    .experts = "experts.",
    .expert_projs = {{{"gate_up_proj", 2.0 / 3}, {"down_proj", 1.0 / 3}, {"", 0}}},
    .shared = "mlp."};
// MiniMax-M3 (nvidia/MiniMax-M3-NVFP4's quantized_layers and exclude_modules):
// language_model.model.layers.N.* under the wrapper; block_sparse_moe.experts.E.w1 / w3 / w2,
// block_sparse_moe.shared_experts.*, mlp.* on the dense layers, self_attn.* (index_q_proj / index_k_proj
// among them).
constexpr ModuleNaming kMinimaxM3Names{.layers = "language_model.model.layers.",
                                       .experts = "block_sparse_moe.experts.0.",
                                       .expert_projs = {{{"w1", 1.0 / 3}, {"w3", 1.0 / 3}, {"w2", 1.0 / 3}}},
                                       .shared = "block_sparse_moe.shared_experts."};
constexpr ModuleNaming kGptOssNames{
    .experts = "mlp.experts.",
    .expert_projs = {{{"gate_up_proj", 2.0 / 3}, {"down_proj", 1.0 / 3}, {"", 0}}},
    .shared = ""};

// The networks tokenline reads: by model_type, else by the transformers class a config's architectures
// names (Kimi-K2's model_type kimi_k2 is a DeepseekV3ForCausalLM). Qwen2's q/k/v biases (under 0.01% of
// its weights) are not counted.
struct Network {
  std::string_view model_type;
  std::string_view architecture;  // empty: known by model_type only
  void (*read)(const Reader&, ModelConfig&);
  ModuleNaming names;
};
constexpr Network kNetworks[] = {
    {"deepseek_v3", "DeepseekV3ForCausalLM", read_mla, kDeepseekNames},
    {"deepseek_v4", "DeepseekV4ForCausalLM", read_deepseek_v4, kDeepseekV4Names},
    {"deepseek_v32", "", read_dsa, kDeepseekNames},
    {"gemma3_text", "Gemma3ForCausalLM", read_gemma3, kGemmaNames},
    {"gemma4_text", "Gemma4ForCausalLM", read_gemma4, kGemma4Names},
    {"glm_moe_dsa", "", read_dsa, kDeepseekNames},
    {"glm4_moe", "Glm4MoeForCausalLM", read_glm4_moe, kDeepseekNames},
    {"gpt_oss", "GptOssForCausalLM", read_gpt_oss, kGptOssNames},
    {"kimi_linear", "KimiLinearForCausalLM", read_kimi_linear, kKimiLinearNames},
    {"llama", "LlamaForCausalLM", read_llama, kDeepseekNames},
    {"llama4_text", "Llama4ForCausalLM", read_llama4, kLlama4Names},
    {"mimo", "MiMoForCausalLM", read_mimo, kQwenNames},
    {"mimo_v2_flash", "MiMoV2FlashForCausalLM", read_mimo_v2_flash, kDeepseekNames},
    {"minimax_m2", "MiniMaxM2ForCausalLM", read_minimax_m2, kMixtralNames},
    {"minimax_m3", "MiniMaxM3SparseForCausalLM", read_minimax_m3, kMinimaxM3Names},
    {"mistral", "MistralForCausalLM", read_llama, kDeepseekNames},
    {"mixtral", "MixtralForCausalLM", read_mixtral, kMixtralNames},
    {"nemotron_h", "NemotronHForCausalLM", read_nemotron_h, kNemotronHNames},
    {"qwen2", "Qwen2ForCausalLM", read_llama, kQwenNames},
    {"qwen3", "Qwen3ForCausalLM", read_qwen3, kQwenNames},
    {"qwen3_moe", "Qwen3MoeForCausalLM", read_qwen3_moe, kQwenNames},
    {"qwen3_next", "Qwen3NextForCausalLM", read_qwen3_next, kQwenNames},
    {"qwen3_5_text", "", read_qwen3_5, kQwen35Names},
    {"qwen3_5_moe_text", "", read_qwen3_next, kQwen35Names},
    // Qwen3-VL's text models (transformers models/qwen3_vl, qwen3_vl_moe): Qwen3 / Qwen3-MoE decoders (q/k
    // norms; mlp_only_layers, decoder_sparse_step) under a vision wrapper; the interleaved M-RoPE and the
    // deepstack visual features added to the first layers' hidden states cost nothing on text.
    {"qwen3_vl_text", "", read_qwen3, kQwenNames},
    {"qwen3_vl_moe_text", "", read_qwen3_moe, kQwenNames},
};

// Families whose layers need a mechanism tokenline does not model yet: refused naming the field that asks
// for it. readable: the network above reads its shape (weights and parameter counts are still computed).
struct Unsupported {
  std::string_view model_type;
  std::string_view field;
  std::string_view mechanism;
};
constexpr Unsupported kUnsupported[] = {
    {"falcon_h1", "mamba_d_ssm", "attention and Mamba-2 side by side in one block"},
    // Llama-3.3-Nemotron-Super-49B (DeciLM): each layer's attention and FFN width from a search
    // (block_configs).
    {"nemotron-nas", "block_configs", "layers of per-layer attention and FFN widths (DeciLM block_configs)"},
};

const Unsupported* find_unsupported(std::string_view model_type) {
  for (const Unsupported& u : kUnsupported)
    if (u.model_type == model_type) return &u;
  return nullptr;
}

std::string unsupported_message(const Reader& r, const Unsupported& u) {
  auto it = r.raw().find(std::string(u.field));
  // ASCII (non-ASCII escaped) so that the cut below never splits a UTF-8 sequence.
  std::string found =
      it == r.raw().end() ? "model_type '" + std::string(u.model_type) + "'" : it->dump(-1, ' ', true);
  constexpr size_t kShown = 80;  // a list of one entry per layer stays one readable line
  if (found.size() > kShown) found = found.substr(0, kShown) + "...";
  return InputError(r.where(u.field),
                    "full-attention, MLA or DSA layers (" + std::string(u.mechanism) +
                        " is not modelled yet; model_type " + std::string(u.model_type) + ")",
                    found)
      .what();
}

const Network* find_network(const Reader& r, const std::string& model_type) {
  for (const Network& n : kNetworks)
    if (n.model_type == model_type) return &n;
  auto it = r.raw().find("architectures");
  if (it == r.raw().end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) return nullptr;
  const std::string cls = (*it)[0].get<std::string>();
  for (const Network& n : kNetworks)
    if (!n.architecture.empty() && n.architecture == cls) return &n;
  return nullptr;
}

// Python's json writes float('inf') and float('nan') as the bare words Infinity, -Infinity and NaN
// (transformers' to_json_string; Nemotron-H's time_step_limit holds Infinity). They become the strings
// "Infinity", "-Infinity" and "NaN": a field tokenline reads then fails as a mistyped value, with its name.
std::string quote_python_literals(const std::string& body) {
  std::string out;
  out.reserve(body.size());
  bool in_string = false;
  char last = 0;  // the last significant character outside strings
  for (size_t i = 0; i < body.size(); ++i) {
    const char ch = body[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < body.size()) {
        out += body[++i];
      } else if (ch == '"') {
        in_string = false;
        last = '"';
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
      out += ch;
      continue;
    }
    if (last == ':' || last == ',' || last == '[') {
      bool replaced = false;
      for (const std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
        const size_t end = i + word.size();
        const bool boundary = end >= body.size() || !std::isalnum(static_cast<unsigned char>(body[end]));
        if (body.compare(i, word.size(), word) == 0 && boundary) {
          out += '"';
          out += word;
          out += '"';
          i = end - 1;
          last = '"';
          replaced = true;
          break;
        }
      }
      if (replaced) continue;
    }
    out += ch;
    if (!std::isspace(static_cast<unsigned char>(ch))) last = ch;
  }
  return out;
}

json parse_config_object(const CheckpointFiles& files) {
  json j = parse_checkpoint_json(files.config, files.config_path);
  if (!j.is_object()) throw InputError(files.config_path, "a JSON object", j.type_name());
  return j;
}

// A multimodal wrapper (Kimi-K2.5's kimi_k25, Qwen3.5's qwen3_5_moe, ...) holds the text model under
// text_config; its vision tower (vision_config) is left out of the model, and said so.
std::string left_out_towers(const json& top) {
  std::string out;
  for (const char* tower : {"vision_config", "audio_config"}) {
    auto it = top.find(tower);
    if (it != top.end() && it->is_object())
      out += std::string(out.empty() ? "" : "; ") + tower + " (its encoder is not modelled: text only)";
  }
  return out;
}

// A wrapper's text_config may omit its model_type (transformers builds the text class from the wrapper's
// sub_configs): the text model type each wrapper implies.
std::string text_model_type(const json& top) {
  const std::string wrapper =
      top.value("model_type", json("")).is_string() ? top.value("model_type", "") : "";
  for (const auto& [outer, inner] :
       {std::pair{"gemma3", "gemma3_text"}, std::pair{"gemma4", "gemma4_text"},
        std::pair{"llama4", "llama4_text"}, std::pair{"minimax_m3_vl", "minimax_m3"},
        std::pair{"kimi_k3", "kimi_linear"}})
    if (wrapper == outer) return inner;
  return "";
}

// The class defaults transformers fills in for fields a family's config.json leaves out, where published
// checkpoints rely on them: google/gemma-3-27b-it's text_config names neither vocab_size nor
// max_position_embeddings nor sliding_window_pattern (transformers 4.50 configuration_gemma3.py
// Gemma3TextConfig: vocab_size 262208, max_position_embeddings 131072, head_dim 256, num_key_value_heads 4,
// sliding_window 4096, tie_word_embeddings true).
void fill_class_defaults(json& j, const std::string& model_type) {
  // Llama4TextConfig (transformers models/llama4/configuration_llama4.py): attention_chunk_size=8192; an
  // explicit null turns chunking off.
  if (model_type == "llama4_text" && !j.contains("attention_chunk_size")) j["attention_chunk_size"] = 8192;
  // moonshotai/Kimi-Linear-48B-A3B-Instruct's config.json writes model_max_length (1048576) and no
  // max_position_embeddings (Kimi-K3's writes max_position_embeddings).
  if (model_type == "kimi_linear" && !j.contains("max_position_embeddings") && j.contains("model_max_length"))
    j["max_position_embeddings"] = j["model_max_length"];
  if (model_type != "gemma3_text") return;
  for (const auto& [field, value] :
       {std::pair{"vocab_size", json(262208)}, std::pair{"max_position_embeddings", json(131072)},
        std::pair{"head_dim", json(256)}, std::pair{"num_key_value_heads", json(4)},
        std::pair{"sliding_window", json(4096)}, std::pair{"tie_word_embeddings", json(true)}})
    if (!j.contains(field)) j[field] = value;
}

// DeepSeek-V4's routed experts in FP4 beside FP8-block Linear layers (expert_dtype "fp4": E2M1 weights,
// a UE8M0 scale per 32 values, as vLLM loads them: its DeepSeek-V4 quantization config returns the MXFP4
// MoE method for expert_dtype fp4). nvidia's NVFP4 copies keep the FP8 checkpoint's quant_method and name
// the experts' NVFP4 in quantization_config.moe_quant_algo (and quantized_layers: layers.N.ffn.experts).
// The routed experts (and the MTP layer's weights, experts most of them) in `experts`, every other quantized
// group in the checkpoint's format as read.
void experts_in(WeightFormats& w, const WeightFormat& experts, const std::string& source) {
  w.mixed = true;
  w.group_quantized.fill(w.quantized);
  w.quantized = experts;
  w.group_quantized[size_t(WeightGroup::kRoutedExperts)] = experts;
  w.group_quantized[size_t(WeightGroup::kMtp)] = experts;
  w.source += source;
}

void deepseek_v4_expert_format(const Reader& r, const json& config, WeightFormats& w) {
  if (r.string_or("expert_dtype", "") != "fp4" || w.quantized.kind != WeightFormatKind::kFp8Block || w.mixed)
    return;
  auto q = config.find("quantization_config");
  const bool nvfp4 = q != config.end() && q->is_object() && q->value("moe_quant_algo", json("")) == "NVFP4";
  experts_in(w, {.kind = nvfp4 ? WeightFormatKind::kNvfp4 : WeightFormatKind::kMxfp4}, " + expert_dtype");
}

// An MXFP8 checkpoint whose routed experts are NVFP4 (quantization_config.moe_quant_algo beside quant_method
// mxfp8, as MiniMax-M3.1's exports write it and rtp-llm's loader reads it): the experts (and the MTP layer's)
// NVFP4, the rest MXFP8. Another moe_quant_algo is refused naming it.
void mxfp8_expert_format(const json& config, const json& top, const std::string& path, WeightFormats& w) {
  if (w.quantized.kind != WeightFormatKind::kMxfp8 || w.mixed) return;
  for (const json* at : {&config, &top}) {
    auto q = at->find("quantization_config");
    if (q == at->end() || !q->is_object() || !q->contains("moe_quant_algo")) continue;
    const json& algo = (*q)["moe_quant_algo"];
    if (algo != "NVFP4")
      throw InputError(path + ": quantization_config.moe_quant_algo", "\"NVFP4\" (with quant_method mxfp8)",
                       algo.dump());
    experts_in(w, {.kind = WeightFormatKind::kNvfp4}, " + moe_quant_algo");
    return;
  }
}

// simulate: refuse a family tokenline cannot simulate before reading its fields (parse_hf_model).
HfModelRead read_config(const CheckpointFiles& files, bool simulate) {
  const std::string& path = files.config_path;
  const json top = parse_config_object(files);
  auto text = top.find("text_config");
  const bool wrapped = text != top.end() && text->is_object() && !top.contains("num_hidden_layers");
  json j = wrapped ? *text : top;
  const Reader outer(j, path, wrapped ? "text_config." : "");
  std::string model_type = outer.string_or("model_type", "");
  if (wrapped && model_type.empty()) model_type = text_model_type(top);
  fill_class_defaults(j, model_type);
  Reader r(j, path, wrapped ? "text_config." : "");
  HfModelRead out;
  ModelConfig& c = out.config;
  c.name = path;
  c.hf_model_type = model_type;
  if (wrapped) c.left_out = left_out_towers(top);
  const Network* network = find_network(r, c.hf_model_type);
  const Unsupported* unsupported = find_unsupported(c.hf_model_type);
  if (unsupported != nullptr && (simulate || network == nullptr || network->model_type != c.hf_model_type))
    throw InputError(unsupported_message(r, *unsupported));
  if (network == nullptr) {
    std::string types;
    for (const Network& n : kNetworks) types += (types.empty() ? "" : ", ") + std::string(n.model_type);
    throw InputError(r.where("model_type"), types + " (or an architectures class of one of them)",
                     "'" + c.hf_model_type + "'");
  }
  // Nemotron 3 Ultra's config writes no num_hidden_layers: transformers 5's NemotronHConfig takes the length
  // of its layers_block_type.
  auto blocks = j.find("layers_block_type");
  c.layers = !j.contains("num_hidden_layers") && model_type == "nemotron_h" && blocks != j.end() &&
                     blocks->is_array()
                 ? to_int(int64_t(blocks->size()), r, "layers_block_type")
                 : to_int(r.integer("num_hidden_layers"), r, "num_hidden_layers");
  c.hidden = r.integer("hidden_size");
  c.heads = to_int(r.integer("num_attention_heads"), r, "num_attention_heads");
  c.vocab = r.integer("vocab_size");
  c.max_context_tokens = r.integer("max_position_embeddings");
  c.dense_intermediate = r.integer_or("intermediate_size", 0);
  // A wrapper may say it for the text model (Kimi-K2.5 says it at both levels).
  auto tie = top.find("tie_word_embeddings");
  c.tie_embeddings =
      r.boolean_or("tie_word_embeddings", tie != top.end() && tie->is_boolean() && tie->get<bool>());
  network->read(r, c);
  if (unsupported != nullptr) {
    out.unsupported = unsupported_message(r, *unsupported);
  } else {
    // A network that built its per-layer mixers (window layers, GDN) read layer_types and its window itself.
    if (c.mixers.empty() && c.attention == AttentionKind::kGqa)
      require_full_attention(r, c, network->model_type);
    if (c.mixers.empty() && !reads_own_layer_types(network->read)) require_full_attention_layers(r, c);
  }
  validate_model(c, path);
  c.weights = read_weight_formats(j, top, files, c, network->names);
  if (c.attention == AttentionKind::kCompressed) deepseek_v4_expert_format(r, j, c.weights);
  mxfp8_expert_format(j, top, path, c.weights);
  c.weight_dtype = weight_dtype_of(c.weights.quantized);
  c.weight_block = c.weights.quantized.kind == WeightFormatKind::kFp8Block ? c.weights.quantized.group : 0;
  return out;
}

}  // namespace

json parse_checkpoint_json(const std::string& text, const std::string& path) {
  require_json_depth(text, path);
  try {
    return json::parse(quote_python_literals(text));
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    // e.what(): "[json.exception.parse_error.101] parse error at line 5, column 1: ..."
    const std::string err = e.what();
    const size_t at = err.find("parse error");
    throw InputError(path, "valid JSON", at == std::string::npos ? err : err.substr(at));
  }
}

HfModelRead parse_hf_config(const CheckpointFiles& files) {
  return read_config(files, false);
}

ModelConfig parse_hf_model(const CheckpointFiles& files) {
  return read_config(files, true).config;
}

}  // namespace tokenline
