// PagedKvTable: the KV page table as a plain CSR struct (FlashInfer's paged_kv_t), shared by CPU and CUDA
// kernels, plus the per-token byte layouts of one layer's MLA cache. The table does not own its arrays;
// the caller keeps them alive (host memory for CPU kernels, device memory for CUDA kernels).
#pragma once

#include <cstdint>

#include "kernels/numeric.h"

namespace tokenline {

struct PagedKvTable {
  int32_t page_size = 0;             // tokens per page
  int32_t batch_size = 0;            // sequences in the table
  const int32_t* indptr = nullptr;   // [batch_size + 1]: sequence b owns indices[indptr[b] .. indptr[b+1])
  const int32_t* indices = nullptr;  // [indptr[batch_size]]: page ids in the pool, in sequence order
  const int32_t* last_page_len = nullptr;  // [batch_size]: tokens in sequence b's last page, 1..page_size
};

// Tokens held by sequence b.
TL_HD inline int32_t kv_len(const PagedKvTable& t, int32_t b) {
  const int32_t pages = t.indptr[b + 1] - t.indptr[b];
  return pages == 0 ? 0 : (pages - 1) * t.page_size + t.last_page_len[b];
}

// Pool slot (page * page_size + offset) of position pos of sequence b. REQUIRES: pos < pages * page_size.
TL_HD inline int64_t kv_slot(const PagedKvTable& t, int32_t b, int32_t pos) {
  const int32_t page = t.indices[t.indptr[b] + pos / t.page_size];
  return static_cast<int64_t>(page) * t.page_size + pos % t.page_size;
}

// How one token of one layer's MLA cache (NoPE latent + RoPE key) is stored.
enum class KvLayout : int32_t {
  kFp8DsMla,  // latent as FP8 e4m3, one FP32 scale per kFp8QuantBlock values, RoPE dims as BF16
  kBf16,      // latent and RoPE dims as BF16
};

constexpr int32_t kFp8QuantBlock = 128;  // values per FP32 scale in fp8_ds_mla (DeepSeek-V3.2 / vLLM)

// Bytes per token per layer. GLM-5.3 / DeepSeek-V3.2 (latent 512, rope 64): fp8_ds_mla
// 512 + 4*4 + 64*2 = 656, bf16 (512 + 64) * 2 = 1152.
TL_HD inline int32_t kv_token_bytes(KvLayout layout, int32_t kv_lora, int32_t rope_dim) {
  switch (layout) {
    case KvLayout::kFp8DsMla:
      return kv_lora + (kv_lora / kFp8QuantBlock) * 4 + rope_dim * 2;
    case KvLayout::kBf16:
      return (kv_lora + rope_dim) * 2;
  }
  return 0;
}

// Latent value i (< kv_lora) of one cached token.
TL_HD inline float kv_load_latent(const uint8_t* token, KvLayout layout, int32_t kv_lora, int32_t i) {
  uint16_t b;
  switch (layout) {
    case KvLayout::kFp8DsMla: {
      float scale;
      memcpy(&scale, token + kv_lora + (i / kFp8QuantBlock) * 4, sizeof scale);
      return fp8e4m3_to_float(token[i]) * scale;
    }
    case KvLayout::kBf16:
      memcpy(&b, token + 2 * i, sizeof b);
      return bf16_to_float(b);
  }
  return 0.0f;
}

// RoPE key value i (< rope_dim) of one cached token.
TL_HD inline float kv_load_rope(const uint8_t* token, KvLayout layout, int32_t kv_lora, int32_t i) {
  uint16_t b;
  switch (layout) {
    case KvLayout::kFp8DsMla:
      memcpy(&b, token + kv_lora + (kv_lora / kFp8QuantBlock) * 4 + 2 * i, sizeof b);
      break;
    case KvLayout::kBf16:
      memcpy(&b, token + 2 * (kv_lora + i), sizeof b);
      break;
  }
  return bf16_to_float(b);
}

// Decodes one cached token into latent[kv_lora] and rope[rope_dim] (float).
TL_HD inline void kv_load_token(float* latent, float* rope, const uint8_t* token, KvLayout layout,
                                int32_t kv_lora, int32_t rope_dim) {
  switch (layout) {
    case KvLayout::kFp8DsMla: {
      const uint8_t* scales = token + kv_lora;
      const uint8_t* rope_bytes = scales + (kv_lora / kFp8QuantBlock) * 4;
      for (int32_t blk = 0; blk < kv_lora / kFp8QuantBlock; ++blk) {
        float scale;
        memcpy(&scale, scales + blk * 4, sizeof scale);
        for (int32_t i = blk * kFp8QuantBlock; i < (blk + 1) * kFp8QuantBlock; ++i)
          latent[i] = fp8e4m3_to_float(token[i]) * scale;
      }
      for (int32_t i = 0; i < rope_dim; ++i) {
        uint16_t b;
        memcpy(&b, rope_bytes + 2 * i, sizeof b);
        rope[i] = bf16_to_float(b);
      }
      return;
    }
    case KvLayout::kBf16: {
      for (int32_t i = 0; i < kv_lora + rope_dim; ++i) {
        uint16_t b;
        memcpy(&b, token + 2 * i, sizeof b);
        (i < kv_lora ? latent[i] : rope[i - kv_lora]) = bf16_to_float(b);
      }
      return;
    }
  }
}

// Encodes one token. fp8_ds_mla scale per block = amax / 448 (1 for an all-zero block), so the block's
// largest value maps to e4m3's largest finite value.
TL_HD inline void kv_store_token(uint8_t* token, const float* latent, const float* rope, KvLayout layout,
                                 int32_t kv_lora, int32_t rope_dim) {
  switch (layout) {
    case KvLayout::kFp8DsMla: {
      uint8_t* scales = token + kv_lora;
      uint8_t* rope_bytes = scales + (kv_lora / kFp8QuantBlock) * 4;
      for (int32_t blk = 0; blk < kv_lora / kFp8QuantBlock; ++blk) {
        float amax = 0.0f;
        for (int32_t i = 0; i < kFp8QuantBlock; ++i)
          amax = fmaxf(amax, fabsf(latent[blk * kFp8QuantBlock + i]));
        const float scale = amax > 0.0f ? amax / kFp8E4m3Max : 1.0f;
        memcpy(scales + 4 * blk, &scale, sizeof scale);
        for (int32_t i = 0; i < kFp8QuantBlock; ++i) {
          const int32_t j = blk * kFp8QuantBlock + i;
          token[j] = float_to_fp8e4m3(latent[j] / scale);
        }
      }
      for (int32_t i = 0; i < rope_dim; ++i) {
        const uint16_t b = float_to_bf16(rope[i]);
        memcpy(rope_bytes + 2 * i, &b, sizeof b);
      }
      return;
    }
    case KvLayout::kBf16: {
      for (int32_t i = 0; i < kv_lora + rope_dim; ++i) {
        const uint16_t b = float_to_bf16(i < kv_lora ? latent[i] : rope[i - kv_lora]);
        memcpy(token + 2 * i, &b, sizeof b);
      }
      return;
    }
  }
}

}  // namespace tokenline
