#include "engine/model/linear_state.h"

#include <algorithm>

namespace tokenline {

LinearStateBytes linear_state_bytes(const ModelConfig& c, MixerKind kind, int tp) {
  const int64_t t = std::max(1, tp);
  switch (kind) {
    case MixerKind::kAttention:
    case MixerKind::kSlidingWindow:
    case MixerKind::kChunkedAttention:
    case MixerKind::kBlockSparse:
      return {};  // attention layers keep KV pages, not a state
    case MixerKind::kNone:
      return {};  // an FFN block (Nemotron-H) keeps nothing per request
    case MixerKind::kGatedDeltaNet: {
      const GdnShape& g = c.gdn;
      const int64_t channels =
          2 * int64_t{g.key_heads} * g.key_head_dim + int64_t{g.value_heads} * g.value_head_dim;
      return {
          .conv = channels / t * std::max<int64_t>(0, g.conv_kernel - 1) * kConvStateBytes,
          .recurrent = int64_t{g.value_heads} / t * g.key_head_dim * g.value_head_dim * c.ssm_state_bytes};
    }
    case MixerKind::kKda: {
      // vLLM's MambaStateShapeCalculator.kda_state_shape: the q, k and v short convs' windows (P / tp
      // channels each, conv_kernel - 1 inputs) and the recurrent state heads / tp x head_dim x head_dim;
      // SGLang's KimiLinear state (configs/kimi_linear.py, Mamba2CacheParams) the same sizes.
      const KdaShape& k = c.kda;
      return {.conv = 3 * k.width() / t * std::max<int64_t>(0, k.conv_kernel - 1) * kConvStateBytes,
              .recurrent = int64_t{k.heads} / t * k.head_dim * k.head_dim * c.ssm_state_bytes};
    }
    case MixerKind::kMamba2: {
      const Mamba2Shape& m = c.mamba;
      const int64_t groups = m.groups % t == 0 ? m.groups : t;
      const int64_t channels = m.inner() + 2 * groups * m.state_size;
      return {.conv = channels / t * std::max<int64_t>(0, m.conv_kernel - 1) * kConvStateBytes,
              .recurrent = int64_t{m.heads} / t * m.head_dim * m.state_size * c.ssm_state_bytes};
    }
  }
  return {};
}

// DeepSeek-V4's compressors: per compressed layer the FP32 KV and score state of the tokens not yet
// compressed (ratio x head_dim each, twice over on CSA layers whose windows overlap), and on CSA layers the
// indexer compressor's of index_head_dim (aiconfigurator's DeepSeekV4 get_kvcache_bytes_per_sequence at
// 095f58a; SGLang's compress-state rings). Whole on every TP rank: the one KV head is not split. SGLang
// sizes these rings by its SWA pages (deepseek_v4 memory pool sizing: c4_state_pool_size and
// c128_state_pool_size = SWA tokens / swa_page_size x ring size), so tokenline keeps them with the window KV
// (cost_model.cpp), not in the state slots of linear layers.
int64_t compressor_state_bytes(const ModelConfig& c) {
  if (c.attention != AttentionKind::kCompressed) return 0;
  constexpr int64_t kFp32 = 4;
  const CompressedAttention& a = c.compressed;
  int64_t bytes = 0;
  for (const int r : a.ratios) {
    if (r == 0) continue;
    const int64_t overlap = r == 4 ? 2 : 1;
    bytes += 2 * r * overlap * c.head_dim * kFp32;
    if (r == 4) bytes += 2 * r * 2 * a.index_head_dim * kFp32;
  }
  return bytes;
}

int64_t linear_state_bytes_per_request(const ModelConfig& c, int tp) {
  int64_t bytes = 0;
  for (const MixerKind k : {MixerKind::kGatedDeltaNet, MixerKind::kMamba2, MixerKind::kKda})
    bytes += linear_state_bytes(c, k, tp).total() * c.mixer_layers(k);
  return bytes;
}

}  // namespace tokenline
