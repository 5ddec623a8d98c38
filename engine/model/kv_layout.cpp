#include "engine/model/kv_layout.h"

#include "common/input_error.h"
#include "engine/model/model_config.h"

namespace tokenline {
namespace {

constexpr int64_t kFp8ScaleGroup = 128;  // fp8_ds_mla: one FP32 scale per 128 latent dims (512 / 128 = 4)
constexpr int64_t kFp32Bytes = 4;
constexpr int64_t kBf16Bytes = 2;
constexpr int64_t kFp4GroupDims = 16;      // nvfp4: one FP8 (E4M3) scale per 16 FP4 values
constexpr int64_t kIndexerScaleBytes = 4;  // indexer cache: one FP32 scale per token's 128 FP8 keys
// DeepSeek-V4's FP8 entry in SGLang (deepseek_v4_memory_pool.py, as sgl-project/sglang#37138 and #38646 size
// it: 584 B a token): 448 FP8 NoPE dims with a UE8M0 scale per 64 (7 B, padded to 8) and 64 BF16 RoPE dims.
constexpr int64_t kDsv4ScaleGroup = 64;

}  // namespace

std::string_view kv_layout_name(KvLayout layout) {
  switch (layout) {
    case KvLayout::kFp8DsMla:
      return "fp8_ds_mla";
    case KvLayout::kFp8E4m3:
      return "fp8_e4m3";
    case KvLayout::kNvfp4DsMla:
      return "nvfp4_ds_mla";
    case KvLayout::kBf16:
      return "bf16";
  }
  return "?";
}

KvLayout parse_kv_layout(std::string_view name, const std::string& where) {
  for (KvLayout l : {KvLayout::kFp8DsMla, KvLayout::kFp8E4m3, KvLayout::kNvfp4DsMla, KvLayout::kBf16}) {
    if (kv_layout_name(l) == name) return l;
  }
  throw InputError(where, "a KV layout (fp8_ds_mla, fp8_e4m3, nvfp4_ds_mla, bf16)",
                   "'" + std::string(name) + "'");
}

bool layout_fits(KvLayout layout, const ModelConfig& cfg) {
  switch (layout) {
    case KvLayout::kFp8DsMla:
      if (cfg.attention == AttentionKind::kCompressed)
        return (cfg.head_dim - cfg.qk_rope_head_dim) % kDsv4ScaleGroup == 0;
      return cfg.attention == AttentionKind::kMla && cfg.kv_lora_rank % kFp8ScaleGroup == 0;
    case KvLayout::kNvfp4DsMla:
      return cfg.attention == AttentionKind::kMla && cfg.kv_lora_rank % kFp4GroupDims == 0;
    case KvLayout::kFp8E4m3:
    case KvLayout::kBf16:
      return true;
  }
  return false;
}

int64_t kv_bytes_per_token_layer(KvLayout layout, const ModelConfig& cfg, bool full_layer) {
  if (cfg.attention == AttentionKind::kCompressed) {  // one head_dim entry, the key and value of every head
    const int64_t rope = cfg.qk_rope_head_dim, nope = cfg.head_dim - rope;
    switch (layout) {
      case KvLayout::kFp8DsMla:  // SGLang's DeepSeek-V4 pools: 584 B (FP8 NoPE, its scales, BF16 RoPE)
        return nope + nope / kDsv4ScaleGroup + 1 + rope * kBf16Bytes;
      case KvLayout::kFp8E4m3:
        return cfg.head_dim;
      case KvLayout::kBf16:
        return cfg.head_dim * kBf16Bytes;
      case KvLayout::kNvfp4DsMla:
        return 0;  // layout_fits() is false
    }
    return 0;
  }
  if (cfg.attention == AttentionKind::kGqa) {
    const int64_t kv_heads = full_layer ? cfg.full_layer_kv_heads() : cfg.kv_heads;
    const int64_t head_dim = full_layer ? cfg.full_layer_head_dim() : cfg.head_dim;
    const int64_t elems = kv_heads * (head_dim + cfg.gqa_value_dim(full_layer));  // K and V
    switch (layout) {
      case KvLayout::kFp8E4m3:
        return elems;
      case KvLayout::kBf16:
        return elems * kBf16Bytes;
      case KvLayout::kFp8DsMla:
      case KvLayout::kNvfp4DsMla:
        return 0;  // layout_fits() is false: callers check first
    }
    return 0;
  }
  const int64_t lora = cfg.kv_lora_rank;
  const int64_t rope = cfg.qk_rope_head_dim;
  switch (layout) {
    case KvLayout::kFp8DsMla:
      return lora + lora / kFp8ScaleGroup * kFp32Bytes + rope * kBf16Bytes;
    case KvLayout::kFp8E4m3:
      return lora + rope;
    case KvLayout::kNvfp4DsMla:
      return lora / 2 + lora / kFp4GroupDims + rope;
    case KvLayout::kBf16:
      return (lora + rope) * kBf16Bytes;
  }
  return 0;
}

int64_t indexer_bytes_per_token_layer(const ModelConfig& cfg) {
  if (cfg.has_block_sparse()) return cfg.block_sparse.index_dim * kBf16Bytes;
  return cfg.has_indexer() ? cfg.indexer_head_dim + kIndexerScaleBytes : 0;
}

int64_t indexer_key_bytes_per_token_layer(const ModelConfig& cfg) {
  if (cfg.has_block_sparse()) return cfg.block_sparse.index_dim * kBf16Bytes;
  return cfg.has_indexer() ? cfg.indexer_head_dim : 0;
}

int64_t compressed_index_key_bytes(const ModelConfig& cfg) {
  return cfg.attention == AttentionKind::kCompressed ? cfg.compressed.index_head_dim + kIndexerScaleBytes : 0;
}

}  // namespace tokenline
