// Hugging Face config.json -> ModelConfig. nlohmann stays in this file.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <vector>

#include "common/input_error.h"
#include "common/json_depth.h"
#include "engine/model/model_config.h"

namespace tokenline {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  int64_t integer(const char* field) const {
    auto it = j_.find(field);
    if (it == j_.end()) throw InputError(path_ + ": " + field, "an integer field", "no such field");
    if (!it->is_number_integer()) throw InputError(path_ + ": " + field, "an integer", it->dump());
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
    if (!it->is_string()) throw InputError(path_ + ": " + field, "a string", it->dump());
    return it->get<std::string>();
  }
  bool boolean_or(const char* field, bool fallback) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw InputError(path_ + ": " + field, "true or false", it->dump());
    return it->get<bool>();
  }
  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  const json& j_;
  std::string path_;
};

int to_int(int64_t v, const Reader& r, const char* field) {
  if (v < 0 || v > (int64_t{1} << 30))
    throw InputError(r.path() + ": " + field, "a count >= 0", std::to_string(v));
  return static_cast<int>(v);
}

Dtype weight_dtype(const Reader& r) {
  auto q = r.raw().find("quantization_config");
  if (q != r.raw().end() && q->is_object()) {
    auto m = q->find("quant_method");
    if (m != q->end() && m->is_string() && m->get<std::string>() == "fp8") return Dtype::kFp8;
  }
  const std::string t = r.string_or("torch_dtype", "bfloat16");
  if (t == "float16") return Dtype::kFp16;
  if (t == "float32") return Dtype::kFp32;
  return Dtype::kBf16;
}

// quantization_config.weight_block_size [128, 128] -> 128 (square blocks only); 0 when absent.
int64_t weight_block(const Reader& r) {
  auto q = r.raw().find("quantization_config");
  if (q == r.raw().end() || !q->is_object()) return 0;
  auto b = q->find("weight_block_size");
  if (b == q->end() || b->is_null()) return 0;
  const bool square = b->is_array() && b->size() == 2 && (*b)[0].is_number_integer() && (*b)[0] == (*b)[1] &&
                      (*b)[0].get<int64_t>() > 0;
  if (!square) {
    throw InputError(r.path() + ": quantization_config.weight_block_size", "two equal positive integers",
                     b->dump());
  }
  return (*b)[0].get<int64_t>();
}

// index_full_layers (tokenline's own field; not in upstream configs): a count of scoring layers, or the
// list of their indices. Absent: every layer scores (DeepSeek-V3.2).
int indexer_full_layers(const Reader& r, int layers) {
  auto it = r.raw().find("index_full_layers");
  if (it == r.raw().end() || it->is_null()) return layers;
  if (it->is_number_integer()) return to_int(it->get<int64_t>(), r, "index_full_layers");
  if (it->is_array()) return static_cast<int>(it->size());
  throw InputError(r.path() + ": index_full_layers", "a count or a list of layer indices", it->dump());
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

void read_mla(const Reader& r, ModelConfig& c) {
  c.attention = AttentionKind::kMla;
  c.q_lora_rank = r.integer_or("q_lora_rank", 0);
  c.kv_lora_rank = r.integer("kv_lora_rank");
  c.qk_nope_head_dim = r.integer("qk_nope_head_dim");
  c.qk_rope_head_dim = r.integer("qk_rope_head_dim");
  c.v_head_dim = r.integer("v_head_dim");
  read_deepseek_moe(r, c);
  c.default_kv_layout = KvLayout::kBf16;
}

void read_indexer(const Reader& r, ModelConfig& c) {
  c.indexer_heads = to_int(r.integer("index_n_heads"), r, "index_n_heads");
  c.indexer_head_dim = r.integer("index_head_dim");
  c.indexer_topk = r.integer("index_topk");
  c.indexer_full_layers = indexer_full_layers(r, c.layers);
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
  if (step < 1) throw InputError(r.path() + ": decoder_sparse_step", "a step >= 1", std::to_string(step));
  std::vector<bool> dense(static_cast<size_t>(layers), false);
  for (int i = 0; i < layers; ++i) dense[static_cast<size_t>(i)] = (i + 1) % step != 0;
  auto it = r.raw().find("mlp_only_layers");
  if (it != r.raw().end() && !it->is_null()) {
    if (!it->is_array())
      throw InputError(r.path() + ": mlp_only_layers", "a list of layer indices", it->dump());
    for (const json& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= layers) {
        throw InputError(r.path() + ": mlp_only_layers", "layer indices 0 .. num_hidden_layers - 1",
                         v.dump());
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
      throw InputError(r.path() + ": use_sliding_window",
                       "false (tokenline models full attention, not a sliding window)", "true");
    return;
  }
  const int64_t window = r.integer_or("sliding_window", 0);
  if (window > 0 && window < c.max_context_tokens)
    throw InputError(r.path() + ": sliding_window",
                     "null or at least max_position_embeddings (tokenline models full attention, not a "
                     "sliding window)",
                     std::to_string(window));
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

// The networks tokenline reads: by model_type, else by the transformers class a config's architectures
// names (Kimi-K2's model_type kimi_k2 is a DeepseekV3ForCausalLM). Qwen2's q/k/v biases (under 0.01% of
// its weights) are not counted.
struct Network {
  std::string_view model_type;
  std::string_view architecture;  // empty: known by model_type only
  void (*read)(const Reader&, ModelConfig&);
};
constexpr Network kNetworks[] = {
    {"deepseek_v3", "DeepseekV3ForCausalLM", read_mla},
    {"deepseek_v32", "", read_dsa},
    {"glm_moe_dsa", "", read_dsa},
    {"glm4_moe", "Glm4MoeForCausalLM", read_glm4_moe},
    {"llama", "LlamaForCausalLM", read_llama},
    {"mistral", "MistralForCausalLM", read_llama},
    {"mixtral", "MixtralForCausalLM", read_mixtral},
    {"qwen2", "Qwen2ForCausalLM", read_llama},
    {"qwen3", "Qwen3ForCausalLM", read_qwen3},
    {"qwen3_moe", "Qwen3MoeForCausalLM", read_qwen3_moe},
};

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

json parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "a readable config.json", "a file that cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  require_json_depth(body, path);
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    // e.what(): "[json.exception.parse_error.101] parse error at line 5, column 1: ..."
    const std::string what = e.what();
    const size_t at = what.find("parse error");
    throw InputError(path, "valid JSON", at == std::string::npos ? what : what.substr(at));
  }
  if (!j.is_object()) throw InputError(path, "a JSON object", j.type_name());
  return j;
}

}  // namespace

ModelConfig load_hf_config(const std::string& path) {
  const json j = parse_file(path);
  Reader r(j, path);
  ModelConfig c;
  c.name = path;
  c.hf_model_type = r.string_or("model_type", "");
  c.layers = to_int(r.integer("num_hidden_layers"), r, "num_hidden_layers");
  c.hidden = r.integer("hidden_size");
  c.heads = to_int(r.integer("num_attention_heads"), r, "num_attention_heads");
  c.vocab = r.integer("vocab_size");
  c.max_context_tokens = r.integer("max_position_embeddings");
  c.dense_intermediate = r.integer_or("intermediate_size", 0);
  c.tie_embeddings = r.boolean_or("tie_word_embeddings", false);
  c.weight_dtype = weight_dtype(r);
  c.weight_block = c.weight_dtype == Dtype::kFp8 ? weight_block(r) : 0;
  const Network* network = find_network(r, c.hf_model_type);
  if (network == nullptr) {
    std::string types;
    for (const Network& n : kNetworks) types += (types.empty() ? "" : ", ") + std::string(n.model_type);
    throw InputError(path + ": model_type", types + " (or an architectures class of one of them)",
                     "'" + c.hf_model_type + "'");
  }
  network->read(r, c);
  if (c.attention == AttentionKind::kGqa) require_full_attention(r, c, network->model_type);
  validate_model(c, path);
  return c;
}

}  // namespace tokenline
