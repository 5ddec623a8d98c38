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
  if (cfg.attention == AttentionKind::kGqa) {
    const int64_t kv_heads = full_layer ? cfg.full_layer_kv_heads() : cfg.kv_heads;
    const int64_t head_dim = full_layer ? cfg.full_layer_head_dim() : cfg.head_dim;
    const int64_t elems = 2 * kv_heads * head_dim;  // K and V
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
  return cfg.has_indexer() ? cfg.indexer_head_dim + kIndexerScaleBytes : 0;
}

int64_t indexer_key_bytes_per_token_layer(const ModelConfig& cfg) {
  return cfg.has_indexer() ? cfg.indexer_head_dim : 0;
}

}  // namespace tokenline
