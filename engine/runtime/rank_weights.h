// RankWeights: the slice of a model's weights one GPU rank holds, copied into its KernelSet's memory.
// Attention heads, the dense and shared-expert MLPs' intermediate rows and the LM head's vocabulary rows
// are split tp ways; routed experts are split ep ways (ep > 1) or, with ep == 1, each expert's
// intermediate rows are split tp ways. Norms, the a-projections, the indexer, the router and the
// embedding are replicated, as are the MTP layer's eh_proj and norms (its decoder layer is split as
// the others). Immutable after construction; owns its buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/runtime/device_buffer.h"
#include "engine/runtime/model_shape.h"
#include "engine/runtime/model_weights.h"

namespace tokenline {

struct RankShard {
  int32_t tp = 1, tp_rank = 0;  // the attention TP group this rank belongs to, and its place in it
  int32_t ep = 1, ep_rank = 0;  // the expert-parallel group (ep == 1: experts split tp ways instead)
};

// The sizes of this rank's slices.
struct ShardDims {
  int32_t heads = 0, dense_inter = 0, shared_inter = 0, moe_inter = 0;
  int32_t expert_begin = 0, local_experts = 0;
  int32_t vocab_begin = 0, vocab_rows = 0;
};

// REQUIRES: heads, dense_inter, moe_inter * shared_experts and vocab divisible by tp; experts by ep;
// moe_inter by tp when ep == 1 (the CLI validates; tokenline run's --parallel).
ShardDims shard_dims(const ModelShape& shape, const RankShard& shard);

class RankWeights {
 public:
  RankWeights(const ModelShape& shape, const ModelWeights& weights, const RankShard& shard,
              const KernelSet& kernels);

  const LayerWeights& layer(int32_t l) const { return layers_[static_cast<size_t>(l)]; }
  const float* embed() const { return embed_; }
  const float* final_norm() const { return final_norm_; }
  const float* lm_head() const { return lm_head_; }
  const MtpWeights& mtp() const { return mtp_; }  // replicated
  const ShardDims& dims() const { return dims_; }

 private:
  // Uploads rows [row0, row0 + rows) x columns [col0, col0 + cols) of a [*, stride] host matrix, for each
  // of `blocks` consecutive [block_rows, stride] blocks; nullptr when src is.
  const float* put(const float* src, int64_t stride, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                   int64_t blocks = 1, int64_t block_rows = 0);
  const float* put_all(const float* src, int64_t elements);
  // A fused [2 * inter, cols] gate|up matrix cut to this rank's [inter0, +n) of both halves, per block.
  const float* put_gate_up(const float* src, int64_t inter, int64_t cols, int64_t inter0, int64_t n,
                           int64_t blocks = 1);

  const KernelSet& kernels_;
  ShardDims dims_;
  std::vector<DeviceBuffer<float>> buffers_;
  std::vector<LayerWeights> layers_;  // [layers + mtp_layers]
  MtpWeights mtp_;
  const float *embed_ = nullptr, *final_norm_ = nullptr, *lm_head_ = nullptr;
};

}  // namespace tokenline
