#include "engine/model/model_config.h"

#include <algorithm>

#include "common/input_error.h"

namespace tokenline {
namespace {

// One DeepSeek-V4 attention block of compress ratio r (DeepSeek-V4's reference model code, as
// aiconfigurator's _BaseDeepSeekV4AttentionModule._estimate_weights counts it at 095f58a): wq_a (hidden ->
// q_lora) and its norm, wq_b (q_lora -> heads x head_dim), wkv (hidden -> head_dim) and its norm, wo_a (each
// of o_groups groups of heads -> o_lora_rank), wo_b (o_groups x o_lora_rank -> hidden), a sink per head; a
// compressed layer's compressor (wkv and wgate, hidden -> head_dim, twice as wide on CSA layers whose
// windows overlap, a positional bias per slot, a norm); a CSA layer's indexer (wq_b, q_lora -> index heads x
// index_head_dim; weights_proj, hidden -> index heads; its own overlapping compressor of index_head_dim).
double compressed_attention_params(const ModelConfig& c, int ratio) {
  const CompressedAttention& a = c.compressed;
  const double h = double(c.hidden), q = double(c.q_lora_rank), hd = double(c.head_dim);
  const double heads = double(c.heads);
  double p = h * q + q + q * heads * hd + h * hd + hd + heads * hd * double(a.o_lora_rank) +
             double(a.o_groups) * double(a.o_lora_rank) * h + heads;
  if (ratio != 0) {
    const double mult = ratio == 4 ? 2 : 1;
    p += 2 * h * mult * hd + ratio * mult * hd + hd;
  }
  return p;
}

// A CSA layer's indexer: wq_b (q_lora -> index heads x index_head_dim), weights_proj (hidden -> index heads),
// its own overlapping compressor of index_head_dim (wkv, wgate, the positional bias, a norm).
double compressed_indexer_params(const ModelConfig& c) {
  const CompressedAttention& a = c.compressed;
  const double h = double(c.hidden), q = double(c.q_lora_rank);
  const double ih = double(a.index_heads), ihd = double(a.index_head_dim);
  return q * ih * ihd + h * ih + 2 * h * 2 * ihd + 4 * 2 * ihd + ihd;
}

// Hyper-connections (hc_mult residual copies): per layer two mixes (before attention and before the FFN),
// each a (2 + hc) x hc map of the hc x hidden stream plus its bias and three scales; the head's one more.
double hyper_connection_params(const ModelConfig& c) {
  const double hc = c.compressed.hc_mult, h = double(c.hidden);
  if (hc <= 1) return 0;
  return c.layers * 2 * ((2 + hc) * hc * hc * h + (2 + hc) * hc + 3) + hc * hc * h + hc + 1;
}

// Parameters of one MLA or GQA attention block, its norms included. full_layer: a full-attention layer of
// a model whose full layers have their own shape (Gemma 4's global layers: their head width and KV heads,
// and no v_proj where keys double as values).
// DeepSeek-V4's: its MTP layer's (the decoder layers' are count_params', each by its ratio).
double attention_params(const ModelConfig& c, bool full_layer = false) {
  const double h = static_cast<double>(c.hidden);
  if (c.attention == AttentionKind::kCompressed)
    return compressed_attention_params(c, c.compressed.mtp_ratio) +
           (c.compressed.mtp_ratio == 4 ? compressed_indexer_params(c) : 0);
  if (c.attention == AttentionKind::kGqa) {
    const double hd = static_cast<double>(full_layer ? c.full_layer_head_dim() : c.head_dim);
    const int kv_heads = full_layer ? c.full_layer_kv_heads() : c.kv_heads;
    const double qk_norm = c.qk_norm ? 2.0 * hd : 0.0;
    const double q = c.attn_output_gate ? 2.0 * h * c.heads * hd : h * c.heads * hd;
    const double vd = static_cast<double>(c.gqa_value_dim(full_layer));
    const double v =
        full_layer && c.full_k_eq_v ? 0.0 : h * kv_heads * vd;  // no v_proj: k_proj's output is V
    return q + h * kv_heads * hd + v + c.heads * vd * h + qk_norm;
  }
  const double qk = static_cast<double>(c.qk_nope_head_dim + c.qk_rope_head_dim);
  const double q = c.q_lora_rank > 0
                       ? h * c.q_lora_rank + c.q_lora_rank + double(c.q_lora_rank) * c.heads * qk
                       : h * c.heads * qk;
  const double kv_a = h * double(c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank;
  const double kv_b = double(c.kv_lora_rank) * c.heads * double(c.qk_nope_head_dim + c.v_head_dim);
  const double o = double(c.heads) * c.v_head_dim * h;
  // Kimi's mla_use_output_gate: g_proj, hidden -> heads x v_head_dim (modeling_kimi.py KimiMLAAttention).
  const double gate = c.attn_output_gate ? h * c.heads * double(c.v_head_dim) : 0;
  return q + kv_a + kv_b + o + gate;
}

// One Gated DeltaNet mixer (transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz (q, k of the key heads; v, z
// of the value heads), in_proj_ba (two per value head), a depthwise conv1d over q, k, v, A_log and dt_bias
// per value head, the gated RMSNorm over a value head, out_proj.
double gdn_params(const ModelConfig& c) {
  const GdnShape& g = c.gdn;
  const double h = static_cast<double>(c.hidden);
  const double key = double(g.key_heads) * double(g.key_head_dim);
  const double value = double(g.value_heads) * double(g.value_head_dim);
  return h * (2 * key + 2 * value) + h * 2.0 * g.value_heads + (2 * key + value) * double(g.conv_kernel) +
         2.0 * g.value_heads + double(g.value_head_dim) + value * h;
}

// One Kimi Delta Attention mixer (modeling_kimi.py KimiDeltaAttention,
// moonshotai/Kimi-Linear-48B-A3B-Instruct; its checkpoint's tensors: q/k/v_proj, q/k/v_conv1d, A_log,
// dt_bias, f_a/f_b_proj, b_proj, g_a/g_b_proj or g_proj, o_norm, o_proj): q, k and v (hidden -> P each),
// their depthwise convs (P x conv_kernel each), A_log per head and dt_bias per channel, the decay gate's f_a
// (hidden -> head_dim) and f_b (head_dim -> P), beta (hidden -> heads), the output gate (full rank: hidden ->
// P; else g_a and g_b like f), the gated RMSNorm over a head, o_proj (P -> hidden).
double kda_params(const ModelConfig& c) {
  const KdaShape& k = c.kda;
  const double h = static_cast<double>(c.hidden), p = double(k.width()), d = double(k.head_dim);
  const double low_rank = h * d + d * p;
  return 3 * h * p + 3 * p * double(k.conv_kernel) + k.heads + p + low_rank + h * k.heads +
         (k.full_rank_gate ? h * p : low_rank) + d + p * h;
}

// One Mamba-2 mixer (transformers' NemotronHMamba2Mixer): in_proj (hidden -> z, x, B, C and dt: 2 x inner
// + 2 x groups x state + heads), the depthwise conv1d over x, B and C (with bias), A_log, D and dt_bias per
// head, the gated RMSNorm over inner, out_proj.
double mamba2_params(const ModelConfig& c) {
  const Mamba2Shape& m = c.mamba;
  const double h = static_cast<double>(c.hidden), inner = double(m.inner());
  const double bc = 2.0 * m.groups * double(m.state_size);
  return h * (2 * inner + bc + m.heads) + (inner + bc) * double(m.conv_kernel + 1) + 3.0 * m.heads + inner +
         inner * h;
}

// One full layer's indexer: wq_b (q_lora -> heads x dim), wk (hidden -> dim), k_norm (LayerNorm weight +
// bias), weights_proj (hidden -> heads).
double indexer_params(const ModelConfig& c) {
  if (!c.has_indexer()) return 0;
  const double q_in = static_cast<double>(c.q_lora_rank > 0 ? c.q_lora_rank : c.hidden);
  const double dim = static_cast<double>(c.indexer_head_dim);
  return q_in * c.indexer_heads * dim + double(c.hidden) * dim + 2 * dim + double(c.hidden) * c.indexer_heads;
}

// One MiniMax-M3 block-sparse layer's indexer (vLLM MiniMaxM3QKVParallelLinearWithIndexer: index_q and
// index_k in the fused qkv projection; the checkpoint's self_attn.index_q_proj / index_k_proj): index_q
// (hidden -> index_heads x index_dim), index_k (hidden -> index_dim, one shared head), and their Gemma
// RMSNorms (one index_dim weight each).
double block_sparse_indexer_params(const ModelConfig& c) {
  const BlockSparseShape& b = c.block_sparse;
  const double h = static_cast<double>(c.hidden), dim = static_cast<double>(b.index_dim);
  return h * b.index_heads * dim + h * dim + 2 * dim;
}

void require(bool ok, const std::string& where, const std::string& field, const std::string& expected,
             int64_t found) {
  if (!ok) throw InputError(where + ": " + field, expected, std::to_string(found));
}

// Bounds on a model's sizes: far above every published model (DeepSeek-V3 61 layers, Llama-3.1-405B 126,
// hidden 16384, vocab 262144, Llama-4-Scout's 10M context), low enough that the ledger's int counts
// (2 x layers RMSNorms, layers x heads, ...) and its FLOP figures stay in range.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxWidth = int64_t{1} << 20;    // hidden, intermediate and expert sizes
constexpr int64_t kMaxHeads = int64_t{1} << 16;    // heads, KV heads, indexer heads, experts
constexpr int64_t kMaxHeadDim = int64_t{1} << 16;  // head dims and low-rank widths
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxContext = int64_t{1} << 27;  // 134M tokens

// `value` in lo .. hi, else InputError naming the field and the range.
void require_range(int64_t value, int64_t lo, int64_t hi, const std::string& where,
                   const std::string& field) {
  if (value < lo || value > hi)
    throw InputError(where + ": " + field, std::to_string(lo) + " .. " + std::to_string(hi),
                     std::to_string(value));
}

}  // namespace

bool ModelConfig::indexer_full_layer(int layer) const {
  if (!has_indexer() || layer < 0 || layer >= layers) return false;
  if (!indexer_layer_full.empty())
    return size_t(layer) < indexer_layer_full.size() && indexer_layer_full[size_t(layer)];
  // ceil((layer + 1) F / L) > ceil(layer F / L): layer 0 is always full, F layers in all.
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  return ceil_div(int64_t{layer + 1} * indexer_full_layers, layers) >
         ceil_div(int64_t{layer} * indexer_full_layers, layers);
}

std::string_view mixer_kind_name(MixerKind kind) {
  switch (kind) {
    case MixerKind::kAttention:
      return "attention";
    case MixerKind::kGatedDeltaNet:
      return "gdn";
    case MixerKind::kMamba2:
      return "mamba2";
    case MixerKind::kSlidingWindow:
      return "sliding_window";
    case MixerKind::kChunkedAttention:
      return "chunked_attention";
    case MixerKind::kNone:
      return "none";
    case MixerKind::kKda:
      return "kda";
    case MixerKind::kBlockSparse:
      return "block_sparse";
  }
  return "attention";
}

std::string_view ffn_kind_name(FfnKind kind) {
  switch (kind) {
    case FfnKind::kDense:
      return "dense";
    case FfnKind::kMoe:
      return "moe";
    case FfnKind::kNone:
      return "none";
  }
  return "dense";
}

int CompressedAttention::layers_of(int ratio) const {
  return int(std::count(ratios.begin(), ratios.end(), ratio));
}

int ModelConfig::moe_layers() const {
  if (!is_moe()) return 0;
  if (ffns.empty()) return layers - dense_layers;
  int n = 0;
  for (const FfnKind k : ffns) n += k == FfnKind::kMoe ? 1 : 0;
  return n;
}

int ModelConfig::mlp_dense_layers() const {
  if (ffns.empty()) return is_moe() ? dense_layers : layers;
  int n = 0;
  for (const FfnKind k : ffns) n += k == FfnKind::kDense ? 1 : 0;
  return n;
}

double ModelConfig::mlp_params(int64_t intermediate) const {
  return double(mlp_projections) * double(hidden) * double(intermediate);
}

double ModelConfig::expert_params() const {
  return double(mlp_projections) * double(expert_width()) * double(moe_intermediate);
}

int ModelConfig::linear_layers() const {
  int n = 0;
  for (int i = 0; i < int(mixers.size()); ++i) n += linear_layer(i) ? 1 : 0;
  return n;
}

// modeling_kimi.py KimiDecoderLayer._forward_attn_residual: layer l (0-based) mixes, before its attention,
// the snapshots of the blocks written so far (one at every layer l % block == 0, the embedding first) and
// the running sum (none at layer 0, whose input is the embedding); before its FFN, the snapshots (its own
// included when it writes one) and the running sum (then its attention output); the model's final mix
// (output_attn_res_proj) all of them and the running sum.
int64_t ModelConfig::attn_res_reads() const {
  if (attn_res_block <= 0) return 0;
  int64_t reads = 0, snapshots = 0;
  for (int l = 0; l < layers; ++l) {
    if (snapshots > 0) reads += snapshots + 1;
    if (l % attn_res_block == 0) ++snapshots;
    reads += snapshots + 1;
  }
  return reads + snapshots + 1;
}

int ModelConfig::mixer_layers(MixerKind kind) const {
  if (mixers.empty()) return kind == MixerKind::kAttention ? layers : 0;
  int n = 0;
  for (const MixerKind k : mixers) n += k == kind ? 1 : 0;
  return n;
}

int ModelConfig::window_layers() const {
  int n = 0;
  for (int i = 0; i < int(mixers.size()); ++i) n += window_layer(i) ? 1 : 0;
  return n;
}

bool ModelConfig::chunked_attention() const {
  for (const MixerKind k : mixers)
    if (k == MixerKind::kChunkedAttention) return true;
  return false;
}

int ModelConfig::full_attention_layers() const {
  if (mixers.empty()) return layers;
  int n = 0;
  for (const MixerKind k : mixers) n += k == MixerKind::kAttention || k == MixerKind::kBlockSparse ? 1 : 0;
  return n;
}

double ParamCounts::total() const {
  return attention + indexer + dense_mlp + routed_experts + shared_experts + router + norms + embed + lm_head;
}

double ParamCounts::active() const {
  return total() - routed_experts + routed_active;
}

ParamCounts count_params(const ModelConfig& c) {
  ParamCounts p;
  const double h = static_cast<double>(c.hidden);
  if (c.attention == AttentionKind::kCompressed) {  // each layer by its ratio; the CSA indexers apart
    for (const int r : c.compressed.ratios) p.attention += compressed_attention_params(c, r);
    p.indexer = compressed_indexer_params(c) * c.compressed.layers_of(4);
  } else {
    // Gemma 4: its full layers (kAttention) and window layers each of their own shape.
    const double attention =
        c.full_layer_shape_differs()
            ? attention_params(c, true) * c.full_attention_layers() +
                  attention_params(c) * (c.attention_layers() - c.full_attention_layers())
            : attention_params(c) * c.attention_layers();
    p.attention = attention + gdn_params(c) * c.mixer_layers(MixerKind::kGatedDeltaNet) +
                  mamba2_params(c) * c.mixer_layers(MixerKind::kMamba2) +
                  kda_params(c) * c.mixer_layers(MixerKind::kKda);
  }
  if (c.attention_sinks) p.attention += double(c.heads) * c.attention_layers();  // one sink logit per head
  p.indexer += indexer_params(c) * c.indexer_full_layers;
  p.indexer += block_sparse_indexer_params(c) * c.mixer_layers(MixerKind::kBlockSparse);
  p.dense_mlp = c.mlp_params(c.dense_intermediate) * c.mlp_dense_layers();
  // Shared experts run at hidden; routed ones at expert_width() (a latent MoE's latent, else hidden).
  const double expert = c.mlp_params(c.moe_intermediate), routed = c.expert_params();
  p.routed_experts = routed * c.routed_experts * c.moe_layers();
  p.routed_active = routed * c.experts_per_token * c.moe_layers();
  p.latent_proj = c.latent_proj_params() * c.moe_layers();
  p.shared_experts = expert * c.shared_experts * c.moe_layers() + p.latent_proj;
  const double score_bias = c.router_score_bias ? c.routed_experts : 0;
  p.router = (double(c.routed_experts) * h + score_bias) * c.moe_layers();
  p.norms = h * c.block_norms() + h + hyper_connection_params(c);
  // Attention residuals: per layer two RMSNorms and two hidden -> 1 projections; the final mix's one of each.
  if (c.attn_res_block > 0) p.norms += 4 * h * c.layers + 2 * h;
  if (c.moe_latent_norm) p.norms += double(c.moe_latent) * c.moe_layers();
  p.embed = double(c.vocab) * h;
  p.lm_head = c.tie_embeddings ? 0 : double(c.vocab) * h;
  // MTP layer: enorm + hnorm, eh_proj (2h -> h), one decoder layer (MoE; a dense model's: its dense MLP, as
  // MiMo's and Qwen3.5-27B's MTP layers are), and its final norm.
  const double moe_layer = attention_params(c, true) + 2 * h + routed * c.routed_experts +
                           expert * c.shared_experts + c.latent_proj_params() + double(c.routed_experts) * h +
                           score_bias + (c.is_moe() ? 0 : c.mlp_params(c.dense_intermediate));
  p.mtp = c.mtp_layers * (2 * h + 2 * h * h + moe_layer + h);
  return p;
}

double group_params(const ParamCounts& p, WeightGroup g) {
  switch (g) {
    case WeightGroup::kAttention:
      return p.attention;
    case WeightGroup::kIndexer:
      return p.indexer;
    case WeightGroup::kDenseMlp:
      return p.dense_mlp;
    case WeightGroup::kRoutedExperts:
      return p.routed_experts;
    case WeightGroup::kSharedExperts:
      return p.shared_experts;
    case WeightGroup::kRouter:
      return p.router;
    case WeightGroup::kNorms:
      return p.norms;
    case WeightGroup::kEmbed:
      return p.embed;
    case WeightGroup::kLmHead:
      return p.lm_head;
    case WeightGroup::kMtp:
      return p.mtp;
  }
  return 0;
}

double group_bytes_per_param(const ModelConfig& c, WeightGroup g) {
  const WeightFormats& w = c.weights;
  if (!w.per_group) return weight_bytes_per_param(weight_format_of(c.weight_dtype), c.hidden);
  const double s = w.share(g);
  const double q = weight_bytes_per_param(w.quantized_of(g), c.hidden);
  const double u = weight_bytes_per_param(w.unquantized, c.hidden);
  if (s >= 1) return q;
  if (s <= 0) return u;
  return s * q + (1 - s) * u;
}

double group_gemm_peak_flops(const ModelConfig& c, WeightGroup g, const Hardware& hw) {
  const WeightFormats& w = c.weights;
  if (!w.per_group) return hw.peak_flops(c.weight_dtype);
  const double s = w.share(g);
  const double q = weight_gemm_peak_flops(w.quantized_of(g), hw);
  const double u = weight_gemm_peak_flops(w.unquantized, hw);
  if (s >= 1 || q == u) return q;
  if (s <= 0) return u;
  return 1 / (s / q + (1 - s) / u);  // the share's FLOPs at each rate, one after the other
}

bool uniform_weight_bytes(const ModelConfig& c) {
  const double first = group_bytes_per_param(c, WeightGroup::kAttention);
  for (size_t g = 1; g < kWeightGroupCount; ++g)
    if (group_bytes_per_param(c, static_cast<WeightGroup>(g)) != first) return false;
  return true;
}

void override_weight_format(ModelConfig& c, std::string_view format) {
  const WeightFormat f = parse_weight_format(format, "--weights-format");
  WeightFormats& w = c.weights;
  const bool unquantized_kind = f.kind == WeightFormatKind::kBf16 || f.kind == WeightFormatKind::kFp16 ||
                                f.kind == WeightFormatKind::kFp32;
  if (!w.per_group || w.quantized == w.unquantized) {
    w.per_group = true;
    w.unquantized = {.kind = WeightFormatKind::kBf16};
    w.quantized_share = {};
    for (const WeightGroup g : {WeightGroup::kAttention, WeightGroup::kIndexer, WeightGroup::kDenseMlp,
                                WeightGroup::kRoutedExperts, WeightGroup::kSharedExperts, WeightGroup::kMtp})
      w.quantized_share[static_cast<size_t>(g)] = 1;
  }
  if (unquantized_kind) w.unquantized = f;
  w.quantized = f;
  w.mixed = false;
  w.source = "--weights-format";
  c.weight_dtype = weight_dtype_of(f);
  c.weight_block = f.kind == WeightFormatKind::kFp8Block ? f.group : 0;
}

void validate_model(const ModelConfig& c, const std::string& where) {
  require_range(c.layers, 1, kMaxLayers, where, "num_hidden_layers");
  require_range(c.hidden, 1, kMaxWidth, where, "hidden_size");
  require_range(c.heads, 1, kMaxHeads, where, "num_attention_heads");
  require_range(c.vocab, 1, kMaxVocab, where, "vocab_size");
  require_range(c.max_context_tokens, 1, kMaxContext, where, "max_position_embeddings");
  require_range(c.dense_intermediate, 0, kMaxWidth, where, "intermediate_size");
  require_range(c.moe_intermediate, 0, kMaxWidth, where, "moe_intermediate_size");
  require_range(c.routed_experts, 0, kMaxHeads, where, "n_routed_experts");
  require_range(c.kv_heads, 0, kMaxHeads, where, "num_key_value_heads");
  require_range(c.indexer_heads, 0, kMaxHeads, where, "index_n_heads");
  for (const auto& [v, field] :
       {std::pair{c.head_dim, "head_dim"}, std::pair{c.q_lora_rank, "q_lora_rank"},
        std::pair{c.kv_lora_rank, "kv_lora_rank"}, std::pair{c.qk_nope_head_dim, "qk_nope_head_dim"},
        std::pair{c.qk_rope_head_dim, "qk_rope_head_dim"}, std::pair{c.v_head_dim, "v_head_dim"},
        std::pair{c.indexer_head_dim, "index_head_dim"}})
    require_range(v, 0, kMaxHeadDim, where, field);
  require_range(c.mtp_layers, 0, kMaxLayers, where, "num_nextn_predict_layers");
  require_range(c.moe_latent, 0, kMaxWidth, where, "moe_latent_size");
  require_range(c.attn_res_block, 0, kMaxLayers, where, "attn_res_block_size");
  require_range(c.full_head_dim, 0, kMaxHeadDim, where, "global_head_dim");
  require_range(c.full_kv_heads, 0, kMaxHeads, where, "num_global_key_value_heads");
  if (c.full_kv_heads > 0)
    require(c.heads % c.full_kv_heads == 0, where, "num_global_key_value_heads",
            "a positive divisor of num_attention_heads", c.full_kv_heads);
  if (c.has_indexer()) require_range(c.indexer_topk, 1, c.max_context_tokens, where, "index_topk");
  require(c.layers > 0, where, "num_hidden_layers", "a positive layer count", c.layers);
  require(c.hidden > 0, where, "hidden_size", "a positive size", c.hidden);
  require(c.heads > 0, where, "num_attention_heads", "a positive head count", c.heads);
  require(c.vocab > 0, where, "vocab_size", "a positive size", c.vocab);
  require(c.max_context_tokens > 0, where, "max_position_embeddings", "a positive length",
          c.max_context_tokens);
  require(c.dense_layers >= 0 && c.dense_layers <= c.layers, where, "first_k_dense_replace",
          "0 .. num_hidden_layers", c.dense_layers);
  if (c.attention == AttentionKind::kMla) {
    require(c.kv_lora_rank > 0, where, "kv_lora_rank", "a positive rank", c.kv_lora_rank);
    require(c.qk_rope_head_dim > 0, where, "qk_rope_head_dim", "a positive size", c.qk_rope_head_dim);
    require(c.qk_nope_head_dim >= 0, where, "qk_nope_head_dim", "a size >= 0", c.qk_nope_head_dim);
    require(c.v_head_dim > 0, where, "v_head_dim", "a positive size", c.v_head_dim);
    require(c.q_lora_rank >= 0, where, "q_lora_rank", "a rank >= 0 (or null)", c.q_lora_rank);
  } else {
    require(c.kv_heads > 0 && c.heads % c.kv_heads == 0, where, "num_key_value_heads",
            "a positive divisor of num_attention_heads", c.kv_heads);
    require(c.head_dim > 0, where, "head_dim", "a positive size", c.head_dim);
  }
  if (c.attention == AttentionKind::kCompressed) {
    const CompressedAttention& a = c.compressed;
    require(c.qk_rope_head_dim > 0 && c.qk_rope_head_dim < c.head_dim, where, "qk_rope_head_dim",
            "1 .. head_dim - 1", c.qk_rope_head_dim);
    require(c.q_lora_rank > 0, where, "q_lora_rank", "a positive rank", c.q_lora_rank);
    require_range(a.o_lora_rank, 1, kMaxWidth, where, "o_lora_rank");
    require(a.o_groups >= 1 && c.heads % a.o_groups == 0, where, "o_groups",
            "a positive divisor of num_attention_heads", a.o_groups);
    require_range(a.hc_mult, 1, 64, where, "hc_mult");
    require(a.ratios.size() == size_t(c.layers), where, "compress_ratios", "a ratio per layer",
            int64_t(a.ratios.size()));
    require(c.window_tokens >= 1 && c.window_tokens <= c.max_context_tokens, where, "sliding_window",
            "1 .. max_position_embeddings (" + std::to_string(c.max_context_tokens) + ")", c.window_tokens);
    if (a.layers_of(4) > 0 || a.mtp_ratio == 4) {
      require_range(a.index_heads, 1, kMaxHeads, where, "index_n_heads");
      require_range(a.index_head_dim, 1, kMaxHeadDim, where, "index_head_dim");
      require_range(a.index_topk, 1, c.max_context_tokens, where, "index_topk");
    }
  }
  if (c.is_moe()) {
    require(c.experts_per_token >= 1 && c.experts_per_token <= c.routed_experts, where, "num_experts_per_tok",
            "1 .. n_routed_experts", c.experts_per_token);
    require(c.moe_intermediate > 0, where, "moe_intermediate_size", "a positive size", c.moe_intermediate);
    require(c.shared_experts >= 0, where, "n_shared_experts", "a count >= 0", c.shared_experts);
  }
  if (c.mlp_dense_layers() > 0) {
    require(c.dense_intermediate > 0, where, "intermediate_size", "a positive size", c.dense_intermediate);
  }
  if (c.has_indexer()) {
    require(c.indexer_head_dim > 0, where, "index_head_dim", "a positive size", c.indexer_head_dim);
    require(c.indexer_topk > 0, where, "index_topk", "a positive count", c.indexer_topk);
    require(c.indexer_full_layers >= 1 && c.indexer_full_layers <= c.layers, where, "index_full_layers",
            "1 .. num_hidden_layers", c.indexer_full_layers);
  }
  require(c.mtp_layers >= 0, where, "num_nextn_predict_layers", "a count >= 0", c.mtp_layers);
  if (c.mixer_layers(MixerKind::kBlockSparse) > 0) {  // MiniMax-M3's sparse_attention_config
    const BlockSparseShape& b = c.block_sparse;
    const std::string sac = "sparse_attention_config.";
    require(c.attention == AttentionKind::kGqa, where, sac + "use_sparse_attention",
            "block-sparse layers over GQA attention", 1);
    require_range(b.index_heads, 1, kMaxHeads, where, sac + "sparse_num_index_heads");
    require_range(b.index_dim, 1, kMaxHeadDim, where, sac + "sparse_index_dim");
    require_range(b.block_tokens, 1, kMaxContext, where, sac + "sparse_block_size");
    require_range(b.topk_blocks, 1, kMaxContext, where, sac + "sparse_topk_blocks");
    require(b.topk_tokens() <= c.max_context_tokens, where, sac + "sparse_topk_blocks",
            "blocks of at most max_position_embeddings (" + std::to_string(c.max_context_tokens) +
                ") tokens in all",
            b.topk_blocks);
  }
  if (c.window_layers() > 0) {  // a window the context never fills contradicts the config (docs/layers.md)
    const char* field = c.chunked_attention() ? "attention_chunk_size" : "sliding_window";
    require(c.window_tokens >= 1 && c.window_tokens <= c.max_context_tokens, where, field,
            "1 .. max_position_embeddings (" + std::to_string(c.max_context_tokens) + ")", c.window_tokens);
  }
  if (!c.mixers.empty())
    require(c.mixers.size() == size_t(c.layers), where, "layer_types", "a layer kind per layer",
            int64_t(c.mixers.size()));
  if (!c.ffns.empty()) {
    require(c.ffns.size() == size_t(c.layers), where, "moe_layers", "an FFN kind per layer",
            int64_t(c.ffns.size()));
    const bool moe_listed = std::find(c.ffns.begin(), c.ffns.end(), FfnKind::kMoe) != c.ffns.end();
    require(c.is_moe() || !moe_listed, where, "n_routed_experts", "experts for the MoE layers (a count >= 1)",
            c.routed_experts);
    require(c.dense_layers == c.mlp_dense_layers(), where, "first_k_dense_replace",
            "the dense layers of the per-layer FFN list (" + std::to_string(c.mlp_dense_layers()) + ")",
            c.dense_layers);
  }
  require(c.mlp_projections == 2 || c.mlp_projections == 3, where, "mlp_hidden_act",
          "a gated (3 projections) or plain (2) MLP", c.mlp_projections);
  if (!layout_fits(c.default_kv_layout, c)) {
    throw InputError(where, "a default KV layout that fits the model",
                     std::string(kv_layout_name(c.default_kv_layout)));
  }
}

}  // namespace tokenline
