// ModelConfig: the architecture constants of one model, from a preset or a Hugging Face config.json.
// Plain data; the loaders validate it (every count positive, every divisibility the ledger relies on).
// Parameter counts and the layer structure are derived from these constants, never typed in.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/kv_layout.h"
#include "engine/model/weight_format.h"
#include "topologies/hardware.h"

namespace tokenline {

enum class AttentionKind {
  kMla,  // multi-head latent attention (DeepSeek-V3 / GLM-5.3): KV cache holds a kv_lora latent + RoPE key
  kGqa,  // grouped-query attention (Llama, Qwen3): KV cache holds kv_heads x head_dim keys and values
  // DeepSeek-V4's compressed attention: one head_dim-wide KV entry per token, the key and the value of every
  // query head (MQA), and per layer (CompressedAttention::ratios) the last window_tokens entries plus, on
  // CSA layers, the entries of every 4 tokens compressed into one and read through an indexer's top-k, on
  // HCA layers every 128 into one and read whole. docs/layers.md "DeepSeek-V4".
  kCompressed,
};

// DeepSeek-V4's layer shapes beside head_dim (512), qk_rope_head_dim, q_lora_rank and window_tokens (its
// sliding_window): the DeepseekV4ForCausalLM config fields of deepseek-ai/DeepSeek-V4-Flash and -Pro.
struct CompressedAttention {
  // Per decoder layer, compress_ratios: 0 (the window only), 4 (CSA) or 128 (HCA); the MTP layer's after.
  std::vector<int> ratios;
  int mtp_ratio = 0;
  int64_t o_lora_rank = 0;  // the grouped output projection: o_groups groups of heads, each to o_lora_rank
  int o_groups = 0;
  int hc_mult = 0;      // hyper-connections: the residual stream is hc_mult copies of the hidden state
  int index_heads = 0;  // CSA layers' indexer over the compressed keys
  int64_t index_head_dim = 0;
  int64_t index_topk = 0;
  int layers_of(int ratio) const;  // decoder layers with that ratio
};

// A layer's token mixer where a hybrid's layers differ (layer_types, hybrid_override_pattern): the model's
// attention over the whole context (paged KV); attention over the last window_tokens keys only:
// kSlidingWindow (gpt-oss, Gemma 3: each query sees the window_tokens keys before it, itself included) or
// kChunkedAttention (Llama 4: each query sees the keys of its own window_tokens-long chunk), both keeping at
// most window_tokens of KV per request; or a linear-attention mixer that keeps a fixed-size recurrent state
// per request and no KV: Gated DeltaNet (Qwen3-Next, Qwen3.5), Mamba-2 (Nemotron-H) or Kimi Delta Attention
// (Kimi Linear, Kimi-K3: the delta rule with a per-channel decay); or kNone, a block with no token mixer
// (Nemotron-H's MLP and MoE blocks: each of its blocks is a mixer or an FFN). docs/layers.md.
enum class MixerKind {
  kAttention,
  kGatedDeltaNet,
  kSlidingWindow,
  kChunkedAttention,
  kMamba2,
  kNone,
  kKda,
  kBlockSparse
};
// "attention", "gdn", "sliding_window", "chunked_attention", "mamba2", "none", "kda", "block_sparse"
std::string_view mixer_kind_name(MixerKind kind);

// A layer's FFN where a model's layers differ beyond "the first dense_layers are dense" (Llama 4's
// interleaved MoE layers, Nemotron-H's blocks): a dense MLP of dense_intermediate, the MoE (routed experts,
// shared experts, router), or none (Nemotron-H's mixer blocks). docs/layers.md.
enum class FfnKind { kDense, kMoe, kNone };
// "dense", "moe", "none"
std::string_view ffn_kind_name(FfnKind kind);

// Gated DeltaNet sizes (Qwen3-Next's linear_* fields).
struct GdnShape {
  int key_heads = 0;
  int value_heads = 0;
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  int64_t conv_kernel = 0;
};

// Kimi Delta Attention sizes (linear_attn_config of kimi_linear; the modeling code's KimiDeltaAttention,
// moonshotai/Kimi-Linear-48B-A3B-Instruct modeling_kimi.py): heads x head_dim for q, k and v alike (P =
// heads x head_dim), each through a depthwise short conv of conv_kernel; a per-channel decay gate through
// f_a (hidden -> head_dim) and f_b (head_dim -> P); beta (b_proj, hidden -> heads); an output gate through
// g_proj (hidden -> P) when full_rank_gate (use_full_rank_gate), else g_a / g_b like f; a gated RMSNorm over
// a head; o_proj (P -> hidden). The state: heads x head_dim x head_dim per request (linear_state.h).
struct KdaShape {
  int heads = 0;
  int64_t head_dim = 0;
  int64_t conv_kernel = 0;
  bool full_rank_gate = false;
  int64_t width() const { return int64_t{heads} * head_dim; }  // P: q, k, v, gate and o_proj's input
};

// Mamba-2 sizes (Nemotron-H's mamba_num_heads, mamba_head_dim, ssm_state_size, n_groups, conv_kernel):
// heads x head_dim is the inner width the SSM runs over; B and C have n_groups x state_size each.
struct Mamba2Shape {
  int heads = 0;
  int64_t head_dim = 0;
  int64_t state_size = 0;
  int groups = 0;
  int64_t conv_kernel = 0;
  int64_t inner() const { return int64_t{heads} * head_dim; }
};

// MiniMax-M3's block-sparse attention (MSA; its config's sparse_attention_config; vLLM
// vllm/models/minimax_m3/common/indexer.py and sparse_attention.py, docs/layers.md "MiniMax-M3"): on a
// kBlockSparse layer a GQA attention whose every query attends to topk_blocks blocks of block_tokens keys
// (the local block among them), chosen by an indexer: index_heads query heads of index_dim, projected beside
// q / k / v (sharded like the KV heads), scored against one index key of index_dim per cached token (a side
// cache, replicated on every GPU of the rank), the scores reduced per block and over the heads (max), top-k.
// The KV of every token stays cached; only the reads are bounded.
struct BlockSparseShape {
  int index_heads = 0;       // sparse_num_index_heads
  int64_t index_dim = 0;     // sparse_index_dim (the head_dim when absent)
  int64_t block_tokens = 0;  // sparse_block_size
  int64_t topk_blocks = 0;   // sparse_topk_blocks: the blocks a query attends to, init and local included
  int64_t topk_tokens() const { return block_tokens * topk_blocks; }
};

struct ModelConfig {
  std::string name;           // preset name or the config.json path it came from
  std::string left_out;       // parts of the checkpoint not modelled, said in summaries (a vision tower)
  std::string hf_model_type;  // the config's model_type: "glm_moe_dsa", "deepseek_v3", "llama", "qwen3_moe",
                              // ..., or one read by its architectures class ("kimi_k2")
  AttentionKind attention = AttentionKind::kMla;
  int layers = 0;  // decoder layers, MTP layers excluded
  // Layers with a dense MLP: the first ones (first_k_dense_replace); for Qwen3-MoE the mlp_only_layers and
  // those decoder_sparse_step skips, wherever they are (the ledger prices by count, not position).
  int dense_layers = 0;
  int64_t hidden = 0;
  int heads = 0;  // attention (query) heads
  // MLA
  int64_t q_lora_rank = 0;  // 0: no query low-rank projection
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  // MLA: the value head width. GQA: the values' width where it differs from the keys' (MiMo-V2-Flash's 128
  // under 192-wide query-key heads: v_head_dim, swa_v_head_dim), 0 where the values are as wide as the keys.
  int64_t v_head_dim = 0;
  // GQA
  int kv_heads = 0;
  int64_t head_dim = 0;
  bool qk_norm = false;  // Qwen3: an RMSNorm over each head's query and key (2 x head_dim weights per layer)
  // MiniMax-M2: the q and k RMSNorms span all heads of a token (not one head): under attention TP each GPU
  // holds some heads, so their variances are all-reduced over the TP group (ledger qk_norm_allreduce).
  bool qk_norm_all_heads = false;
  // An output gate, sigmoid(x W_g) times the attention output. GQA (Qwen3-Next / Qwen3.5): q_proj also yields
  // a gate per head dim. MLA (Kimi's mla_use_output_gate): its own g_proj, hidden -> heads x v_head_dim.
  bool attn_output_gate = false;
  // Per layer mixer, empty: every layer `attention`. Linear-attention layers hold no KV: their state is a
  // fixed-size slot per request (engine/model/linear_state.h), priced by their own ledger ops.
  std::vector<MixerKind> mixers;
  GdnShape gdn;
  Mamba2Shape mamba;
  KdaShape kda;
  BlockSparseShape block_sparse;  // the kBlockSparse layers' (MiniMax-M3)
  // Bytes of one element of the linear layers' recurrent (SSM / delta) state: SGLang keeps it in float32
  // unless the config's mamba_ssm_dtype says otherwise (python/sglang/srt/configs/mamba_utils.py
  // mamba2_state_dtype: env SGLANG_MAMBA_SSM_DTYPE, else the config's mamba_ssm_dtype, else float32).
  int64_t ssm_state_bytes = 4;
  // Window layers (kSlidingWindow, kChunkedAttention): the keys a query sees at most (W), 0 without any.
  int64_t window_tokens = 0;
  // Gemma 4 (transformers 5.5 models/gemma4/modeling_gemma4.py Gemma4TextAttention): the full-attention
  // layers' own shape where it differs from the window layers' - full_head_dim (global_head_dim),
  // full_kv_heads (num_global_key_value_heads where keys double as values, else num_key_value_heads) and
  // full_k_eq_v (attention_k_eq_v: no v_proj, the values are k_proj's output). 0 / false: the full layers
  // have head_dim and kv_heads like the others. docs/layers.md.
  int64_t full_head_dim = 0;
  int full_kv_heads = 0;
  bool full_k_eq_v = false;
  // gpt-oss: a learned sink logit per query head in every attention layer's softmax (one more "key" whose
  // value is zero): heads parameters per layer, one more exp per (query, head).
  bool attention_sinks = false;
  // Per layer FFN, empty: the first dense_layers layers dense, the others MoE (all dense without experts).
  // When set, dense_layers equals its kDense count (the loaders keep them equal).
  std::vector<FfnKind> ffns;
  // Weight matrices of one MLP or expert: 3 for a gated MLP (SwiGLU, GeGLU: gate, up, down), 2 for
  // Nemotron-H's squared-ReLU MLP (up, down; transformers' NemotronHMLP).
  int mlp_projections = 3;
  // MLP / MoE
  int routed_experts = 0;  // 0: dense model
  int experts_per_token = 0;
  int shared_experts = 0;
  int64_t moe_intermediate = 0;
  // Nemotron 3 Super's latent MoE (moe_latent_size; vLLM model_executor/models/nemotron_h.py NemotronHMoE):
  // the routed experts run in this width, between fc1_latent_proj (hidden -> latent) and fc2_latent_proj
  // (latent -> hidden); router and shared experts stay at hidden. 0: the experts run at hidden.
  int64_t moe_latent = 0;
  // Kimi-K3's latent MoE (latent_moe_use_norm): an RMSNorm of the latent width on the routed experts' sum
  // before routed_expert_up_proj (latent weights per MoE layer, counted with the norms).
  bool moe_latent_norm = false;
  // Kimi-K3's block attention residuals (attn_res_block_size, modeling_kimi.py _forward_attn_residual): each
  // layer's attention and FFN inputs are softmax mixes, over its tokens' snapshots of the residual stream
  // (one per attn_res_block layers, and the running sum), weighted by an RMSNorm and a hidden -> 1
  // projection of each. 0: the plain residual. docs/layers.md "Kimi Linear and Kimi-K3".
  int attn_res_block = 0;
  bool router_score_bias = true;  // DeepSeek/GLM: e_score_correction_bias per expert; Qwen3-MoE: none
  int64_t dense_intermediate = 0;
  int64_t vocab = 0;
  bool tie_embeddings = false;
  // DeepSeek Sparse Attention lightning indexer (0 heads: no indexer, dense attention)
  int indexer_heads = 0;
  int64_t indexer_head_dim = 0;
  int64_t indexer_topk = 0;
  int indexer_full_layers = 0;  // layers that score; the others reuse the previous full layer's top-k
  // Which layers score, where the config says (GLM-5.2's indexer_types); empty: indexer_full_layers of them
  // spread evenly over the stack. When set, indexer_full_layers is its count of true.
  std::vector<bool> indexer_layer_full;
  CompressedAttention compressed;  // attention == kCompressed only
  int mtp_layers = 0;
  int64_t max_context_tokens = 0;
  Dtype weight_dtype = Dtype::kFp8;
  // FP8 block-scaled weights (quantization_config.weight_block_size): the block edge, 128 for DeepSeek-V3/R1
  // and Qwen3-FP8; 0 for per-tensor FP8 or unquantized weights.
  int64_t weight_block = 0;
  // Per group formats (a Hugging Face config's quantization_config); per_group false: all at weight_dtype.
  WeightFormats weights;
  KvLayout default_kv_layout = KvLayout::kFp8DsMla;

  bool is_moe() const { return routed_experts > 0; }
  // The width a routed expert's GEMMs run in and its all-to-all carries: moe_latent, else hidden.
  int64_t expert_width() const { return moe_latent > 0 ? moe_latent : hidden; }
  double expert_params() const;  // one routed expert: mlp_projections x expert_width() x moe_intermediate
  // The latent MoE's two projections of one MoE layer (hidden x latent each); 0 without a latent.
  double latent_proj_params() const { return moe_latent > 0 ? 2.0 * double(hidden) * double(moe_latent) : 0; }
  // The full-attention layers' head width and KV heads (Gemma 4's global layers), and whether they differ.
  int64_t full_layer_head_dim() const { return full_head_dim > 0 ? full_head_dim : head_dim; }
  // GQA: a full (full_layer) or other attention layer's value width: v_head_dim where set, else its keys'.
  int64_t gqa_value_dim(bool full_layer) const {
    return v_head_dim > 0 ? v_head_dim : full_layer ? full_layer_head_dim() : head_dim;
  }
  int full_layer_kv_heads() const { return full_kv_heads > 0 ? full_kv_heads : kv_heads; }
  bool full_layer_shape_differs() const { return full_head_dim > 0 || full_kv_heads > 0 || full_k_eq_v; }
  int linear_layers() const;               // layers whose mixer is linear attention (GDN, Mamba-2 or KDA)
  int mixer_layers(MixerKind kind) const;  // layers of one mixer kind
  // Layers with attention and so paged KV: every layer but the linear ones and those without a mixer.
  int attention_layers() const { return layers - linear_layers() - mixer_layers(MixerKind::kNone); }
  // Layers whose block has a token mixer (all but Nemotron-H's FFN blocks): one norm and, under TP, one
  // all-reduce each.
  int mixer_blocks() const { return layers - mixer_layers(MixerKind::kNone); }
  bool linear_layer(int layer) const {
    if (layer < 0 || size_t(layer) >= mixers.size()) return false;
    const MixerKind k = mixers[size_t(layer)];
    return k == MixerKind::kGatedDeltaNet || k == MixerKind::kMamba2 || k == MixerKind::kKda;
  }
  // Snapshots of the residual stream the attention residuals' mixes read per token over the whole forward
  // (both mixes of every layer and the final one); 0 without attention residuals.
  int64_t attn_res_reads() const;
  int window_layers() const;  // layers whose mixer is kSlidingWindow or kChunkedAttention
  bool window_layer(int layer) const {
    if (layer < 0 || size_t(layer) >= mixers.size()) return false;
    const MixerKind k = mixers[size_t(layer)];
    return k == MixerKind::kSlidingWindow || k == MixerKind::kChunkedAttention;
  }
  bool chunked_attention() const;  // its window layers are chunked (Llama 4), not sliding
  // Layers whose KV holds the whole context (kAttention: the model's MLA / GQA, and kBlockSparse, which reads
  // only its selected blocks of it), all of them without mixers.
  int full_attention_layers() const;
  bool has_block_sparse() const { return block_sparse.topk_blocks > 0; }
  // Layers that keep an indexer side cache of their own: DSA's full layers, MiniMax-M3's block-sparse ones.
  int indexer_cache_layers() const {
    return has_indexer() ? indexer_full_layers : mixer_layers(MixerKind::kBlockSparse);
  }
  bool has_indexer() const { return indexer_heads > 0; }
  int moe_layers() const;        // layers with the MoE FFN
  int mlp_dense_layers() const;  // layers with a dense MLP
  // Layers with an FFN (all but Nemotron-H's mixer blocks): one norm and, under TP, one all-reduce each.
  int ffn_layers() const { return moe_layers() + mlp_dense_layers(); }
  // RMSNorms before a block's mixer or FFN: two per layer in most models, one per Nemotron-H block.
  int block_norms() const { return mixer_blocks() + ffn_layers(); }
  double mlp_params(int64_t intermediate) const;  // one MLP / expert of that width: projections x hidden x it
  int indexer_shared_layers() const { return has_indexer() ? layers - indexer_full_layers : 0; }
  // True when `layer` (0-based) scores with its own indexer; full layers are spread evenly over the stack.
  bool indexer_full_layer(int layer) const;
};

// Parameter counts (not bytes), derived from the constants. Embedding and LM head counted separately.
struct ParamCounts {
  double attention = 0;       // per-model total over all layers (MLA projections, norms; GDN mixers)
  double indexer = 0;         // indexer wq_b, wk, k_norm, weights_proj over the full layers
  double dense_mlp = 0;       // dense layers' MLPs
  double routed_experts = 0;  // all routed experts of all MoE layers
  double routed_active = 0;   // experts_per_token of them per MoE layer (what one token touches)
  double shared_experts = 0;  // shared experts, and a latent MoE's fc1 / fc2 latent projections (latent_proj)
  double latent_proj = 0;     // of which the latent projections (held whole on every GPU: not TP-split)
  double router = 0;
  double norms = 0;  // per-layer RMSNorm weights and the final norm (and attention residuals' norms and
                     // hidden -> 1 projections, a latent MoE's latent norm)
  double embed = 0;
  double lm_head = 0;     // 0 when tied to the embedding
  double mtp = 0;         // MTP layers (not part of total())
  double total() const;   // the model card's total (MTP excluded)
  double active() const;  // per-token activated: total with routed_experts replaced by routed_active
};

ParamCounts count_params(const ModelConfig& cfg);

// One group's parameters (ParamCounts' term).
double group_params(const ParamCounts& p, WeightGroup g);

// Bytes per parameter of group g, scales included: the share held in the quantized format at its bytes,
// the rest at the unquantized dtype; weight_dtype's bytes when cfg.weights.per_group is false.
double group_bytes_per_param(const ModelConfig& cfg, WeightGroup g);

// The peak FLOP/s group g's GEMMs run at on hw (time-weighted over its quantized and unquantized shares);
// hw.peak_flops(weight_dtype) when cfg.weights.per_group is false.
double group_gemm_peak_flops(const ModelConfig& cfg, WeightGroup g, const Hardware& hw);

// A short line for summaries: "mxfp4 (routed_experts 100%), bf16 elsewhere".
std::string weight_formats_summary(const ModelConfig& cfg);

// True when every group takes the same bytes per parameter (the presets, unquantized checkpoints).
bool uniform_weight_bytes(const ModelConfig& cfg);

// --weights-format: replaces the model's quantized format (its exclusions kept); on an unquantized model
// or a preset, quantizes the Linear layers (attention, indexer, MLPs, experts, MTP) and keeps norms,
// routers and embeddings at BF16 (or all at BF16 for "bf16"). Throws InputError naming --weights-format.
void override_weight_format(ModelConfig& cfg, std::string_view format);

// The preset names, in a fixed order: glm-5.3, glm-5.3-tiny, deepseek-v3.2, deepseek-v3, llama-3.1-8b,
// llama-3.1-70b, gpt-oss-120b, gpt-oss-20b, qwen3.5-397b-a17b, kimi-k2.5, deepseek-v4-pro, deepseek-v4-flash,
// minimax-m2.5, minimax-m3, llama-4-scout,
// nemotron-3-nano-30b-a3b, nemotron-3-super-120b-a12b, nemotron-3-super-120b-a12b-fp8, gemma-3-27b,
// gemma-4-31b, gemma-4-26b-a4b, and the real engine's tiny ones gpt-oss-tiny, qwen3.5-tiny,
// llama-tiny.
const std::vector<std::string>& model_preset_names();

// A preset by name; throws InputError naming the known presets when `name` is unknown.
ModelConfig model_preset(std::string_view name);

// A checkpoint's config files as text: engine/model parses, it never reads a file (run/model_files.h reads
// them from disk; a fuzzer or a test hands text directly).
struct CheckpointFiles {
  std::string config_path;  // config.json's name in messages, and ModelConfig::name
  std::string config;       // config.json's text
  std::string quant_path;   // ModelOpt's hf_quant_config.json beside it; "" when there is none
  std::string quant;        // its text
};

// A Hugging Face config.json (model_type deepseek_v3, deepseek_v32, glm_moe_dsa, glm4_moe, gpt_oss, llama,
// minimax_m2, mistral, mixtral, qwen2, qwen3, qwen3_moe, or another whose architectures class is one of
// theirs; the Gated DeltaNet hybrids qwen3_next, qwen3_5_text, qwen3_5_moe_text; the window-layer families
// gemma3_text, gemma4_text, llama4_text; the Mamba-2 hybrid nemotron_h; the KDA + MLA hybrid kimi_linear),
// or a multimodal wrapper's text_config (Kimi-K2.5, Kimi-K3, Qwen3.5, gemma3 / gemma4, llama4), with its
// weight formats (quantization_config, or hf_quant_config.json beside it). Python's Infinity / NaN literals
// are read. Throws InputError naming the file and the field on missing, mistyped or out-of-range fields, an
// unknown quant_method or format, a window longer than the context, or a mechanism tokenline does not model
// (Gemma 4's num_kv_shared_layers and per-layer inputs, falcon_h1). docs/layers.md lists each family's rules.
ModelConfig parse_hf_model(const CheckpointFiles& files);

// A config.json read as far as tokenline describes it. unsupported: the one-line refusal of a family whose
// layers need a mechanism tokenline does not model yet (qwen3_next's Gated DeltaNet), empty when it
// can be simulated; the shape, parameter counts and weight formats are read either way (weights per GPU
// can be priced). parse_hf_model throws the refusal.
struct HfModelRead {
  ModelConfig config;
  std::string unsupported;
};
HfModelRead parse_hf_config(const CheckpointFiles& files);

// Validates derived invariants (positive counts, dense_layers <= layers, ...); throws InputError with
// `where` as the location.
void validate_model(const ModelConfig& cfg, const std::string& where);

}  // namespace tokenline
