// KernelSet: one backend's kernels and memory behind plain function pointers with the signatures of
// kernels/cpu/kernels.h, so that the model runner is written once and runs on every backend: the CPU
// reference (host memory) or CUDA (device memory, default stream). A set is an immutable static table.
#pragma once

#include <cstdint>

#include "kernels/params.h"

namespace tokenline {

struct KernelSet {
  const char* name = "";    // "cpu" | "cuda"
  bool host_memory = true;  // its pointers are host pointers (the CPU set)

  void (*embedding)(EmbeddingParams) = nullptr;
  void (*rmsnorm)(RmsNormParams) = nullptr;
  void (*layernorm)(LayerNormParams) = nullptr;
  void (*gemm)(GemmParams) = nullptr;
  void (*rope)(RopeParams) = nullptr;
  void (*kv_write)(KvWriteParams) = nullptr;
  void (*mla_absorb_q)(MlaAbsorbQParams) = nullptr;
  void (*mla_absorb_out)(MlaAbsorbOutParams) = nullptr;
  void (*mla_attention_sparse)(MlaAttentionParams) = nullptr;
  void (*index_k_write)(IndexKWriteParams) = nullptr;
  void (*indexer_score)(IndexerScoreParams) = nullptr;
  void (*topk_select)(TopkParams) = nullptr;
  void (*router)(RouterParams) = nullptr;
  void (*moe_experts)(MoeExpertsParams) = nullptr;
  void (*silu_mul)(SiluMulParams) = nullptr;
  void (*scale_add)(ScaleAddParams) = nullptr;
  void (*mtp_input)(MtpInputParams) = nullptr;
  void (*sample)(SampleParams) = nullptr;
  // GQA and Gated DeltaNet (gpt-oss, Qwen3.5): nullptr on a backend without them (CUDA), which the
  // runner refuses for those models.
  void (*gqa_kv_write)(GqaKvWriteParams) = nullptr;
  void (*gqa_attention)(GqaAttentionParams) = nullptr;
  void (*sigmoid_gate)(SigmoidGateParams) = nullptr;
  void (*gdn_conv)(GdnConvParams) = nullptr;
  void (*gdn_recurrence)(GdnRecurrenceParams) = nullptr;
  void (*gated_rmsnorm)(GatedRmsNormParams) = nullptr;

  void* (*alloc)(int64_t bytes) = nullptr;  // zero-filled; nullptr for 0 bytes
  void (*free)(void* ptr) = nullptr;
  void (*upload)(void* dst, const void* host_src, int64_t bytes) = nullptr;
  void (*download)(void* host_dst, const void* src, int64_t bytes) = nullptr;
  void (*copy)(void* dst, const void* src, int64_t bytes) = nullptr;  // within the backend's memory
  void (*synchronize)() = nullptr;  // waits for queued kernels (timing boundaries)
};

const KernelSet& cpu_kernel_set();  // kernels/cpu: always built
// kernels/cuda: only in builds with CUDA (tl_kernels_cuda). REQUIRES: a CUDA device (cuda::device_count()).
const KernelSet& cuda_kernel_set();

}  // namespace tokenline
