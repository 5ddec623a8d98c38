// The recurrent state a linear-attention layer (Gated DeltaNet, Mamba-2, KDA) keeps per request instead of
// KV: a convolution window and the SSM / delta-rule state, fixed in size whatever the context. The engines
// hold it in one slot per running request (engine/core/state_pool.h); cost/memory sizes the slots.
#pragma once

#include <cstdint>

#include "engine/model/model_config.h"

namespace tokenline {

// Conv-window elements are kept in BF16 by SGLang (python/sglang/srt/configs/mamba_utils.py: CONV_DTYPE =
// torch.bfloat16) and in the model's dtype by vLLM (MambaStateDtypeCalculator, mamba_cache_dtype "auto").
inline constexpr int64_t kConvStateBytes = 2;

// One request's state in one linear layer, on one GPU of a TP group of `tp` (the heads split tp ways, as
// SGLang's Mamba2StateShape.create divides them).
struct LinearStateBytes {
  int64_t conv = 0;       // (conv_kernel - 1) past inputs of the conv1d, conv channels / tp each
  int64_t recurrent = 0;  // GDN: value_heads / tp x key_head_dim x value_head_dim; Mamba-2: heads / tp x
                          // head_dim x state_size; KDA: heads / tp x head_dim x head_dim; at
                          // ModelConfig::ssm_state_bytes
  int64_t total() const { return conv + recurrent; }
};

// GDN: conv channels = 2 x key_heads x key_head_dim + value_heads x value_head_dim (q, k and v are
// convolved). KDA: 3 x heads x head_dim (q, k and v, each its own short conv). Mamba-2: inner + 2 x groups x
// state_size (x, B and C), the groups padded to tp when tp does not divide them (SGLang's
// extra_groups_for_head_shards replicates the one group). 0 for attention.
LinearStateBytes linear_state_bytes(const ModelConfig& cfg, MixerKind kind, int tp);

// One request's state over all the model's linear layers on one GPU (SGLang's mamba_cache_per_req:
// (conv + temporal) x the linear layers); 0 for a model without them.
int64_t linear_state_bytes_per_request(const ModelConfig& cfg, int tp);
// DeepSeek-V4's compressors' state of one request (kept with its window KV: cost_model.cpp); 0 otherwise.
int64_t compressor_state_bytes(const ModelConfig& cfg);

}  // namespace tokenline
