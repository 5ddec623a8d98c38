// KvLayout: how one token's KV cache entry of one layer is stored, and what it costs in bytes.
// A closed set; the byte formulas take the model's dimensions so that every figure is derived.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tokenline {

struct ModelConfig;

enum class KvLayout {
  kFp8DsMla,    // fp8_ds_mla: kv_lora FP8 + one FP32 scale per 128 latent dims + RoPE dims in BF16 (656 B)
  kFp8E4m3,     // fp8_e4m3: every latent and RoPE dim in FP8, no scales counted (576 B)
  kNvfp4DsMla,  // nvfp4_ds_mla: kv_lora FP4 + one FP8 scale per 16 dims + RoPE dims in FP8 (352 B)
  kBf16,        // bf16: every dim in BF16 (1152 B for MLA)
};

std::string_view kv_layout_name(KvLayout layout);

// Parses "fp8_ds_mla" | "fp8_e4m3" | "nvfp4_ds_mla" | "bf16"; throws InputError naming `where` otherwise.
KvLayout parse_kv_layout(std::string_view name, const std::string& where);

// Bytes of one token in one layer's main KV cache. MLA: the four formulas above over (kv_lora, rope).
// GQA: 2 (K and V) x kv_heads x head_dim x element bytes (fp8_e4m3 1, bf16 2). REQUIRES: layout_fits.
// full_layer: a full-attention layer (its own head width and KV heads in Gemma 4), else a window layer.
// Gemma 4's full layers whose keys double as values still cache both: vLLM's Gemma4Attention loads k_proj
// into the V slot of its qkv_proj and writes an ordinary K and V cache (model_executor/models/gemma4.py).
int64_t kv_bytes_per_token_layer(KvLayout layout, const ModelConfig& cfg, bool full_layer = true);

// Whether `layout` applies to the model (the *_ds_mla layouts need MLA with kv_lora a multiple of 128).
bool layout_fits(KvLayout layout, const ModelConfig& cfg);

// Bytes of one token in one full layer's indexer cache: head_dim FP8 keys + one FP32 scale (128 + 4 = 132).
// MiniMax-M3's block-sparse layers: one index key of index_dim in BF16 (vLLM's MiniMaxM3IndexerCache,
// indexer_kv_dtype "bf16" by default; vllm/models/minimax_m3/common/indexer.py), replicated on every GPU.
int64_t indexer_bytes_per_token_layer(const ModelConfig& cfg);
// The key part alone (128 B): what the seed counts when it quotes indexer reads (352 MB/token at 128K).
int64_t indexer_key_bytes_per_token_layer(const ModelConfig& cfg);
// DeepSeek-V4: one CSA compressed entry's indexer key, index_head_dim FP8 values and their FP32 scale (the
// DSA indexer cache's layout); 0 for other models.
int64_t compressed_index_key_bytes(const ModelConfig& cfg);

}  // namespace tokenline
