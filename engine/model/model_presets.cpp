// The built-in model presets. Constants from each model's published config.json (GLM-5.3: the seed's
// constant table); glm-5.3-tiny keeps GLM-5.3's structure at sizes a CPU runs in milliseconds.
#include <string>
#include <vector>

#include "common/input_error.h"
#include "engine/model/model_config.h"

namespace tokenline {
namespace {

constexpr int64_t kOneMiTokens = int64_t{1} << 20;  // GLM-5.3's "1M context" = 1,048,576 tokens

ModelConfig glm_5_3() {
  ModelConfig c;
  c.name = "glm-5.3";
  c.hf_model_type = "glm_moe_dsa";
  c.layers = 78;  // 3 dense + 75 MoE
  c.dense_layers = 3;
  c.hidden = 6144;
  c.heads = 64;
  c.q_lora_rank = 2048;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 192;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 256;
  c.routed_experts = 256;
  c.experts_per_token = 8;
  c.shared_experts = 1;
  c.moe_intermediate = 2048;
  c.dense_intermediate = 12288;
  c.vocab = 154880;
  c.indexer_heads = 32;
  c.indexer_head_dim = 128;
  c.indexer_topk = 2048;
  c.indexer_full_layers = 21;  // 21 "full" layers score, 57 "shared" layers reuse their top-k
  c.mtp_layers = 1;
  c.max_context_tokens = kOneMiTokens;
  c.weight_dtype = Dtype::kFp8;
  c.default_kv_layout = KvLayout::kFp8DsMla;
  return c;
}

ModelConfig glm_5_3_tiny() {
  ModelConfig c = glm_5_3();
  c.name = "glm-5.3-tiny";
  c.layers = 4;  // 1 dense + 3 MoE
  c.dense_layers = 1;
  c.hidden = 256;
  c.heads = 4;
  c.q_lora_rank = 64;
  c.kv_lora_rank = 128;  // one fp8_ds_mla scale group
  c.qk_nope_head_dim = 32;
  c.qk_rope_head_dim = 16;
  c.v_head_dim = 32;
  c.routed_experts = 8;
  c.experts_per_token = 2;
  c.moe_intermediate = 64;
  c.dense_intermediate = 512;
  c.vocab = 512;
  c.indexer_heads = 2;
  c.indexer_head_dim = 32;
  c.indexer_topk = 64;
  c.indexer_full_layers = 2;
  c.max_context_tokens = 4096;
  c.weight_dtype = Dtype::kBf16;
  return c;
}

ModelConfig deepseek_v3() {
  ModelConfig c;
  c.name = "deepseek-v3";
  c.hf_model_type = "deepseek_v3";
  c.layers = 61;
  c.dense_layers = 3;
  c.hidden = 7168;
  c.heads = 128;
  c.q_lora_rank = 1536;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.routed_experts = 256;
  c.experts_per_token = 8;
  c.shared_experts = 1;
  c.moe_intermediate = 2048;
  c.dense_intermediate = 18432;
  c.vocab = 129280;
  c.mtp_layers = 1;
  c.max_context_tokens = 163840;
  c.weight_dtype = Dtype::kFp8;
  c.weight_block = 128;  // config.json quantization_config.weight_block_size [128, 128]
  c.default_kv_layout = KvLayout::kBf16;
  return c;
}

ModelConfig deepseek_v3_2() {
  ModelConfig c = deepseek_v3();
  c.name = "deepseek-v3.2";
  c.hf_model_type = "deepseek_v32";
  c.indexer_heads = 64;
  c.indexer_head_dim = 128;
  c.indexer_topk = 2048;
  c.indexer_full_layers = c.layers;  // every layer scores
  c.default_kv_layout = KvLayout::kFp8DsMla;
  return c;
}

ModelConfig llama(const char* name, int layers, int64_t hidden, int heads, int64_t intermediate) {
  ModelConfig c;
  c.name = name;
  c.hf_model_type = "llama";
  c.attention = AttentionKind::kGqa;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = 8;
  c.head_dim = 128;
  c.dense_intermediate = intermediate;
  c.vocab = 128256;
  c.max_context_tokens = 131072;
  c.weight_dtype = Dtype::kBf16;
  c.default_kv_layout = KvLayout::kBf16;
  return c;
}

// Qwen3.5-397B-A17B (Qwen/Qwen3.5-397B-A17B's config.json, Apache-2.0; a copy in
// tests/engine/model/data/hf/qwen3.5-397b-a17b): 60 layers, Gated DeltaNet on three of every four and gated
// full attention on every fourth (layer_types), 512 experts top-10 plus one shared expert, one MTP layer,
// its vision tower left out. Weights in FP8 128 x 128 blocks, as Qwen/Qwen3.5-397B-A17B-FP8 serves them.
ModelConfig qwen3_5_397b() {
  ModelConfig c;
  c.name = "qwen3.5-397b-a17b";
  c.hf_model_type = "qwen3_5_moe_text";
  c.attention = AttentionKind::kGqa;
  c.layers = 60;
  c.hidden = 4096;
  c.heads = 32;
  c.kv_heads = 2;
  c.head_dim = 256;
  c.qk_norm = true;
  c.attn_output_gate = true;
  c.mixers.assign(size_t(c.layers), MixerKind::kGatedDeltaNet);
  for (int l = 3; l < c.layers; l += 4) c.mixers[size_t(l)] = MixerKind::kAttention;
  c.gdn = {.key_heads = 16, .value_heads = 64, .key_head_dim = 128, .value_head_dim = 128, .conv_kernel = 4};
  c.ssm_state_bytes = 4;  // mamba_ssm_dtype float32
  c.routed_experts = 512;
  c.experts_per_token = 10;
  c.shared_experts = 1;
  c.moe_intermediate = 1024;
  c.router_score_bias = false;
  c.vocab = 248320;
  c.mtp_layers = 1;
  c.max_context_tokens = 262144;
  c.weight_dtype = Dtype::kFp8;
  c.weight_block = 128;
  c.default_kv_layout = KvLayout::kBf16;
  c.left_out = "vision_config (its encoder is not modelled: text only)";
  return c;
}

// gpt-oss (openai/gpt-oss-120b and -20b, Apache-2.0): their config.json's fields (the copies in
// tests/engine/model/data/hf/gpt-oss-*/, from aiconfigurator at 095f58a), read by the same rules as a file
// (parse_hf_model): alternating 128-token sliding-window and full layers (layer_types left to
// transformers' rule, which gives the configs' own list), sinks, MXFP4 experts and BF16 elsewhere.
ModelConfig gpt_oss(const char* name, int layers, int experts) {
  const std::string config = R"({
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
    "num_hidden_layers": )" + std::to_string(layers) +
                             R"(, "num_local_experts": )" + std::to_string(experts) + R"(,
    "hidden_size": 2880, "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64,
    "num_key_value_heads": 8, "num_experts_per_tok": 4, "experts_per_token": 4, "sliding_window": 128,
    "max_position_embeddings": 131072, "vocab_size": 201088, "tie_word_embeddings": false,
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn",
        "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}})";
  ModelConfig c = parse_hf_model({.config_path = name, .config = config, .quant_path = "", .quant = ""});
  c.name = name;
  return c;
}

// A preset read from its checkpoint's config.json fields by the same rules as a file (parse_hf_model), so
// a preset and the file it came from cannot drift apart (tests/engine/model compare them).
ModelConfig from_config(const char* name, const std::string& config) {
  ModelConfig c = parse_hf_model({.config_path = name, .config = config, .quant_path = "", .quant = ""});
  c.name = name;
  return c;
}

// The same with a ModelOpt hf_quant_config.json's text beside the config (quant_path names it in messages).
ModelConfig from_checkpoint(const char* name, const std::string& config, const std::string& quant) {
  ModelConfig c = parse_hf_model({.config_path = name,
                                  .config = config,
                                  .quant_path = std::string(name) + "/hf_quant_config.json",
                                  .quant = quant});
  c.name = name;
  return c;
}

// Kimi-K2.5 (moonshotai/Kimi-K2.5, Modified MIT; the copy in tests/engine/model/data/hf/kimi-k2.5): the
// kimi_k25 wrapper's text_config (DeepSeek-V3's MLA and MoE: 61 layers, the first dense, 384 experts top-8
// plus one shared) with its compressed-tensors INT4 (group 32, symmetric) routed experts and BF16 elsewhere
// (its ignore list); the vision tower left out.
ModelConfig kimi_k2_5() {
  return from_config("kimi-k2.5",
                     R"({"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
    "tie_word_embeddings": false, "vision_config": {"model_type": "kimi_k25_vision"},
    "text_config": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2",
      "first_k_dense_replace": 1, "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
      "max_position_embeddings": 262144, "moe_intermediate_size": 2048, "moe_layer_freq": 1,
      "n_routed_experts": 384, "n_shared_experts": 1, "num_attention_heads": 64, "num_experts_per_tok": 8,
      "num_hidden_layers": 61, "num_key_value_heads": 64, "num_nextn_predict_layers": 0, "q_lora_rank": 1536,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 163840,
      "tie_word_embeddings": false, "topk_method": "noaux_tc",
      "quantization_config": {"config_groups": {"group_0": {"input_activations": null,
          "output_activations": null, "targets": ["Linear"], "weights": {"actorder": null,
          "block_structure": null, "dynamic": false, "group_size": 32, "num_bits": 4, "observer": "minmax",
          "observer_kwargs": {}, "strategy": "group", "symmetric": true, "type": "int"}}},
        "format": "pack-quantized", "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
          "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"], "kv_cache_scheme": null,
        "quant_method": "compressed-tensors", "quantization_status": "compressed"}}})");
}

// DeepSeek-V4 (deepseek-ai/DeepSeek-V4-Pro and -Flash, MIT; tests/engine/model/data/hf/deepseek-v4-*): their
// config.json fields. compress_ratios as published: the first two layers (Pro: HCA, Flash: window only), then
// CSA and HCA alternating, the MTP layer's 0 last. FP8 128 x 128 blocks, FP4 routed experts (expert_dtype).
ModelConfig deepseek_v4(const char* name, int layers, int64_t hidden, int heads, int64_t q_lora, int o_groups,
                        int64_t index_topk, int experts, int64_t moe_inter, int first_ratio) {
  std::string ratios;
  for (int i = 0; i <= layers; ++i) {
    const int r = i == layers ? 0 : i < 2 ? first_ratio : i % 2 == 0 ? 4 : 128;
    ratios += (i == 0 ? "" : ", ") + std::to_string(r);
  }
  return from_config(name, R"({"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4",
    "num_hidden_layers": )" + std::to_string(layers) +
                               R"(, "hidden_size": )" + std::to_string(hidden) +
                               R"(, "num_attention_heads": )" + std::to_string(heads) +
                               R"(, "num_key_value_heads": 1, "head_dim": 512, "qk_rope_head_dim": 64,
    "q_lora_rank": )" + std::to_string(q_lora) +
                               R"(, "o_lora_rank": 1024, "o_groups": )" + std::to_string(o_groups) +
                               R"(, "index_n_heads": 64, "index_head_dim": 128,
    "index_topk": )" + std::to_string(index_topk) +
                               R"(, "sliding_window": 128, "hc_mult": 4,
    "n_routed_experts": )" + std::to_string(experts) +
                               R"(, "num_experts_per_tok": 6, "n_shared_experts": 1,
    "moe_intermediate_size": )" +
                               std::to_string(moe_inter) + R"(, "num_nextn_predict_layers": 1,
    "vocab_size": 129280, "max_position_embeddings": 1048576, "tie_word_embeddings": false,
    "expert_dtype": "fp4", "compress_ratios": [)" +
                               ratios + R"(],
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
      "scale_fmt": "ue8m0", "weight_block_size": [128, 128]}})");
}

// MiniMax-M2.5 (MiniMaxAI/MiniMax-M2.5, Modified MIT; tests/engine/model/data/hf/minimax-m2.5): 62 GQA
// layers with q/k norms, 256 experts top-8 with a routing bias, FP8 128 x 128 blocks but the router and the
// LM head.
ModelConfig minimax_m2_5() {
  return from_config("minimax-m2.5",
                     R"({"architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2",
    "num_hidden_layers": 62, "hidden_size": 3072, "num_attention_heads": 48, "num_key_value_heads": 8,
    "head_dim": 128, "intermediate_size": 1536, "vocab_size": 200064, "num_experts_per_tok": 8,
    "num_local_experts": 256, "max_position_embeddings": 196608, "tie_word_embeddings": false,
    "use_qk_norm": true, "use_routing_bias": true, "use_mtp": true, "shared_intermediate_size": 0,
    "quantization_config": {"quant_method": "fp8", "fmt": "float8_e4m3fn", "activation_scheme": "dynamic",
      "weight_block_size": [128, 128], "modules_to_not_convert": ["gate", "e_score_correction_bias", "lm_head"]}})");
}

// MiniMax-M3's per-layer lists (moe_layer_freq, sparse_attention_freq, sparse_disable_index_value): 3 dense
// layers, then 57.
constexpr const char* kM3Layers =
    "[0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
    "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]";

// MiniMax-M3 (MiniMaxAI/MiniMax-M3, MiniMax Community License; tests/engine/model/data/hf/minimax-m3, the
// text model as aiconfigurator copies it): 60 GQA layers (64 query, 4 KV heads), the first 3 dense with a
// dense MLP, 57 block-sparse (an indexer's top 16 blocks of 128 tokens) with 128 experts top-4 and a shared
// expert, BF16. The 57-entry lists are written out as the config writes them.
ModelConfig minimax_m3() {
  return from_config("minimax-m3", std::string(R"({"architectures": ["MiniMaxM3ForCausalLM"],
    "model_type": "minimax_m3", "attention_output_gate": false, "dense_intermediate_size": 12288,
    "first_k_dense_replace": 3, "head_dim": 128, "hidden_act": "swigluoai", "hidden_size": 6144,
    "intermediate_size": 3072, "max_position_embeddings": 1048576, "moe_intermediate_size": 3072,
    "n_shared_experts": 1, "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 60,
    "num_key_value_heads": 4, "num_local_experts": 128, "num_mtp_modules": 7, "num_nextn_predict_layers": 1,
    "partial_rotary_factor": 0.5, "qk_norm_type": "per_head", "rms_norm_eps": 1e-06, "rope_theta": 5000000,
    "rotary_dim": 64, "routed_scaling_factor": 2.0, "scoring_func": "sigmoid", "shared_intermediate_size": 3072,
    "swiglu_alpha": 1.702, "swiglu_limit": 7.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "use_gemma_norm": true, "use_qk_norm": true, "use_routing_bias": true, "vocab_size": 200064,
    "moe_layer_freq": )") + kM3Layers + R"(, "sparse_attention_config": {"sparse_attention_freq": )" +
                                       kM3Layers + R"(, "sparse_disable_index_value": )" + kM3Layers +
                                       R"(, "sparse_block_size": 128, "sparse_index_dim": 128,
    "sparse_init_block": 0, "sparse_local_block": 1, "sparse_num_index_heads": 4, "sparse_score_type": "max",
    "sparse_topk_blocks": 16, "use_sparse_attention": true}})");
}

// Llama-4-Scout-17B-16E (meta-llama/Llama-4-Scout-17B-16E-Instruct, Llama 4 Community License;
// tests/engine/model/data/hf/llama-4-scout): 48 layers, chunked attention of 8192 tokens on three of every
// four and full (NoPE) attention on every fourth, MoE on every layer (16 experts top-1 plus a shared
// expert), BF16.
ModelConfig llama_4_scout() {
  return from_config("llama-4-scout",
                     R"({"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {"attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120,
      "interleave_moe_layer_step": 1, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
      "max_position_embeddings": 10485760, "model_type": "llama4_text", "num_attention_heads": 40,
      "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16,
      "use_qk_norm": true, "vocab_size": 202048}, "torch_dtype": "bfloat16"})");
}

// NVIDIA-Nemotron-3-Nano-30B-A3B (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16, NVIDIA Open Model License;
// tests/engine/model/data/hf/nemotron-3-nano-30b-a3b): 52 blocks, each a Mamba-2 mixer (23), GQA attention
// (6) or an MoE (23: 128 squared-ReLU experts top-6 plus a shared expert twice their width), BF16. The
// smaller Nemotron 3 preset beside Nemotron 3 Super's (below).
ModelConfig nemotron_3_nano() {
  return from_config("nemotron-3-nano-30b-a3b",
                     R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "conv_kernel": 4, "head_dim": 128, "hidden_size": 2688,
    "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    "intermediate_size": 1856, "mamba_head_dim": 64, "mamba_num_heads": 64, "mamba_ssm_cache_dtype": "float32",
    "max_position_embeddings": 262144, "mlp_hidden_act": "relu2", "moe_intermediate_size": 1856,
    "moe_shared_expert_intermediate_size": 3712, "n_groups": 8, "n_routed_experts": 128, "n_shared_experts": 1,
    "num_attention_heads": 32, "num_experts_per_tok": 6, "num_hidden_layers": 52, "num_key_value_heads": 2,
    "sliding_window": null, "ssm_state_size": 128, "tie_word_embeddings": false,
    "time_step_limit": [0.0, Infinity], "vocab_size": 131072})");
}

// NVIDIA-Nemotron-3-Super-120B-A12B (nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8 config.json, NVIDIA Open
// Model License; tests/engine/model/data/hf/nemotron-3-super-120b-a12b-fp8): 88 blocks, 40 Mamba-2 + 8
// attention + 40 latent MoE (512 squared-ReLU experts of 2688 in a 1024-wide latent, top 22, a shared
// expert of 5376 at hidden 4096), one MTP layer (attention + MoE). The BF16 preset is that config without
// its hf_quant_config.json (the BF16 checkpoint, nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16, holds the
// same architecture); the -fp8 one reads it with the file's FP8 per-tensor format (ModelOpt, no module
// excluded in the file: every Linear FP8, embeddings, norms and router BF16).
const char* const kNemotron3SuperConfig =
    R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "chunk_size": 128, "conv_kernel": 4, "head_dim": 128, "hidden_size": 4096,
    "hybrid_override_pattern": "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
    "intermediate_size": 2688, "mamba_head_dim": 64, "mamba_num_heads": 128, "mamba_ssm_cache_dtype": "float32",
    "max_position_embeddings": 262144, "mlp_hidden_act": "relu2", "moe_intermediate_size": 2688,
    "moe_latent_size": 1024, "moe_shared_expert_intermediate_size": 5376, "mtp_hybrid_override_pattern": "*E",
    "n_group": 1, "n_groups": 8, "n_routed_experts": 512, "n_shared_experts": 1, "num_attention_heads": 32,
    "num_experts_per_tok": 22, "num_hidden_layers": 88, "num_key_value_heads": 2, "num_nextn_predict_layers": 1,
    "sliding_window": null, "ssm_state_size": 128, "tie_word_embeddings": false,
    "time_step_limit": [0.0, Infinity], "topk_group": 1, "vocab_size": 131072})";

ModelConfig nemotron_3_super() {
  return from_config("nemotron-3-super-120b-a12b", kNemotron3SuperConfig);
}

ModelConfig nemotron_3_super_fp8() {
  return from_checkpoint("nemotron-3-super-120b-a12b-fp8", kNemotron3SuperConfig,
                         R"({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}})");
}

// Gemma 4 (Apache-2.0), BF16, the gemma4 wrapper's text_config; the vision tower left out.
// gemma-4-31b: google/gemma-4-31B-it's text model (the text_config of nvidia/Gemma-4-31B-IT-NVFP4's
// config.json, tests/engine/model/data/hf/gemma-4-31b-nvfp4, without its quantization_config): 60 layers,
// every sixth full attention (head width 512, 4 KV heads whose keys double as values) and the others
// sliding over 1024 tokens (head width 256, 16 KV heads), 32 query heads, a GeGLU MLP of 21504.
ModelConfig gemma_4_31b() {
  return from_config("gemma-4-31b",
                     R"({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
    "text_config": {"attention_k_eq_v": true, "enable_moe_block": false, "global_head_dim": 512, "head_dim": 256,
      "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 5376, "hidden_size_per_layer_input": 0,
      "intermediate_size": 21504, "max_position_embeddings": 262144, "model_type": "gemma4_text",
      "num_attention_heads": 32, "num_global_key_value_heads": 4, "num_hidden_layers": 60,
      "num_key_value_heads": 16, "num_kv_shared_layers": 0, "sliding_window": 1024,
      "tie_word_embeddings": true, "use_bidirectional_attention": "vision", "use_double_wide_mlp": false,
      "vocab_size": 262144},
    "tie_word_embeddings": true, "dtype": "bfloat16", "vision_config": {"model_type": "gemma4_vision"}})");
}

// gemma-4-26b-a4b: google/gemma-4-26B-A4B (tests/engine/model/data/hf/gemma-4-26b-a4b): 30 layers, every
// sixth full (512 wide, 2 KV heads, keys as values), the others sliding over 1024 tokens (256 wide, 8 KV
// heads); in each layer a GeGLU MLP of 2112 beside 128 GeGLU experts of 704, top 8.
ModelConfig gemma_4_26b_a4b() {
  return from_config("gemma-4-26b-a4b",
                     R"({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
    "text_config": {"attention_k_eq_v": true, "enable_moe_block": true, "global_head_dim": 512, "head_dim": 256,
      "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2816, "hidden_size_per_layer_input": 0,
      "intermediate_size": 2112, "max_position_embeddings": 262144, "model_type": "gemma4_text",
      "moe_intermediate_size": 704, "num_attention_heads": 16, "num_experts": 128,
      "num_global_key_value_heads": 2, "num_hidden_layers": 30, "num_key_value_heads": 8,
      "num_kv_shared_layers": 0, "sliding_window": 1024, "tie_word_embeddings": true,
      "top_k_experts": 8, "use_bidirectional_attention": "vision", "use_double_wide_mlp": false,
      "vocab_size": 262144},
    "tie_word_embeddings": true, "dtype": "bfloat16", "vision_config": {"model_type": "gemma4_vision"}})");
}

// Gemma 3 27B (google/gemma-3-27b-it, Gemma Terms of Use; tests/engine/model/data/hf/gemma-3-27b-it): the
// gemma3 wrapper's text_config, 62 layers of which every sixth is global and the others slide over 1024
// tokens, GQA 32 / 16 heads of 128, transformers' Gemma3TextConfig defaults for what the file leaves out
// (vocab 262208, context 131072, tied embeddings), BF16; the vision tower left out.
ModelConfig gemma_3_27b() {
  return from_config("gemma-3-27b",
                     R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "model_type": "gemma3_text",
      "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
      "query_pre_attn_scalar": 168, "sliding_window": 1024},
    "torch_dtype": "bfloat16", "vision_config": {"model_type": "siglip_vision_model"}})");
}

// The real engine's tiny hybrids (docs/real-engine.md): each keeps its full-size model's structure - the
// layer kinds, their order, attention heads per KV head, sinks, the MoE - at sizes a CPU runs in
// milliseconds, with unquantized BF16 weights (the runner draws FP32 random weights from a seed).
// gpt-oss-tiny: gpt-oss-20b's alternating sliding-window / full GQA layers (sliding first, as its
// layer_types), sink logits and a routed MoE with a router bias; a 32-token window so that a short
// request's window pages fall out of the window.
ModelConfig gpt_oss_tiny() {
  ModelConfig c = gpt_oss("gpt-oss-20b", 24, 32);
  c.name = "gpt-oss-tiny";
  c.layers = 4;
  c.mixers.assign(size_t(c.layers), MixerKind::kAttention);
  for (int l = 0; l < c.layers; l += 2) c.mixers[size_t(l)] = MixerKind::kSlidingWindow;
  c.window_tokens = 32;
  c.hidden = 256;
  c.heads = 4;
  c.kv_heads = 2;
  c.head_dim = 64;
  c.routed_experts = 8;
  c.experts_per_token = 2;
  c.moe_intermediate = 64;
  c.dense_intermediate = 0;
  c.vocab = 512;
  c.max_context_tokens = 4096;
  c.weight_dtype = Dtype::kBf16;
  c.weight_block = 0;
  c.weights = WeightFormats{};
  return c;
}

// qwen3.5-tiny: Qwen3.5-397B-A17B's three Gated DeltaNet layers then one gated full-attention layer (qk
// norm, sigmoid output gate), twice; a routed MoE with one shared expert; no MTP layer.
ModelConfig qwen3_5_tiny() {
  ModelConfig c = qwen3_5_397b();
  c.name = "qwen3.5-tiny";
  c.layers = 8;
  c.mixers.assign(size_t(c.layers), MixerKind::kGatedDeltaNet);
  for (int l = 3; l < c.layers; l += 4) c.mixers[size_t(l)] = MixerKind::kAttention;
  c.hidden = 256;
  c.heads = 4;
  c.kv_heads = 2;
  c.head_dim = 64;
  c.gdn = {.key_heads = 2, .value_heads = 4, .key_head_dim = 32, .value_head_dim = 32, .conv_kernel = 4};
  c.routed_experts = 8;
  c.experts_per_token = 2;
  c.moe_intermediate = 64;
  c.vocab = 512;
  c.mtp_layers = 0;
  c.max_context_tokens = 4096;
  c.weight_dtype = Dtype::kBf16;
  c.weight_block = 0;
  c.left_out = "";
  return c;
}

// llama-tiny: Llama-3.1-8B's structure (full GQA on every layer, 4 query heads per KV head, a dense SwiGLU
// MLP) at the tiny presets' sizes.
ModelConfig llama_tiny() {
  ModelConfig c = llama("llama-tiny", 4, 256, 8, 512);
  c.kv_heads = 2;
  c.head_dim = 32;
  c.vocab = 512;
  c.max_context_tokens = 4096;
  return c;
}

}  // namespace

const std::vector<std::string>& model_preset_names() {
  static const std::vector<std::string> names = {"glm-5.3",
                                                 "glm-5.3-tiny",
                                                 "deepseek-v3.2",
                                                 "deepseek-v3",
                                                 "llama-3.1-8b",
                                                 "llama-3.1-70b",
                                                 "gpt-oss-120b",
                                                 "gpt-oss-20b",
                                                 "qwen3.5-397b-a17b",
                                                 "kimi-k2.5",
                                                 "deepseek-v4-pro",
                                                 "deepseek-v4-flash",
                                                 "minimax-m2.5",
                                                 "minimax-m3",
                                                 "llama-4-scout",
                                                 "nemotron-3-nano-30b-a3b",
                                                 "nemotron-3-super-120b-a12b",
                                                 "nemotron-3-super-120b-a12b-fp8",
                                                 "gemma-3-27b",
                                                 "gemma-4-31b",
                                                 "gemma-4-26b-a4b",
                                                 "gpt-oss-tiny",
                                                 "qwen3.5-tiny",
                                                 "llama-tiny"};
  return names;
}

ModelConfig model_preset(std::string_view name) {
  if (name == "glm-5.3") return glm_5_3();
  if (name == "glm-5.3-tiny") return glm_5_3_tiny();
  if (name == "deepseek-v3.2") return deepseek_v3_2();
  if (name == "deepseek-v3") return deepseek_v3();
  if (name == "llama-3.1-8b") return llama("llama-3.1-8b", 32, 4096, 32, 14336);
  if (name == "llama-3.1-70b") return llama("llama-3.1-70b", 80, 8192, 64, 28672);
  if (name == "qwen3.5-397b-a17b") return qwen3_5_397b();
  if (name == "gpt-oss-120b") return gpt_oss("gpt-oss-120b", 36, 128);
  if (name == "gpt-oss-20b") return gpt_oss("gpt-oss-20b", 24, 32);
  if (name == "kimi-k2.5") return kimi_k2_5();
  if (name == "deepseek-v4-pro")
    return deepseek_v4("deepseek-v4-pro", 61, 7168, 128, 1536, 16, 1024, 384, 3072, 128);
  if (name == "deepseek-v4-flash")
    return deepseek_v4("deepseek-v4-flash", 43, 4096, 64, 1024, 8, 512, 256, 2048, 0);
  if (name == "minimax-m2.5") return minimax_m2_5();
  if (name == "minimax-m3") return minimax_m3();
  if (name == "llama-4-scout") return llama_4_scout();
  if (name == "nemotron-3-nano-30b-a3b") return nemotron_3_nano();
  if (name == "nemotron-3-super-120b-a12b") return nemotron_3_super();
  if (name == "nemotron-3-super-120b-a12b-fp8") return nemotron_3_super_fp8();
  if (name == "gemma-3-27b") return gemma_3_27b();
  if (name == "gemma-4-31b") return gemma_4_31b();
  if (name == "gemma-4-26b-a4b") return gemma_4_26b_a4b();
  if (name == "gpt-oss-tiny") return gpt_oss_tiny();
  if (name == "qwen3.5-tiny") return qwen3_5_tiny();
  if (name == "llama-tiny") return llama_tiny();
  std::string names;
  for (const std::string& n : model_preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw InputError("--model", "one of " + names, "'" + std::string(name) + "'");
}

}  // namespace tokenline
