// CUDA kernels (sm_90) with the CPU reference's signatures (kernels/cpu/kernels.h): same parameter
// structs, device pointers, launched on the default stream (asynchronous; call device_synchronize()).
// Plain C++ header: no CUDA includes, so host code can call it without nvcc.
#pragma once

#include "kernels/params.h"

namespace tokenline::cuda {

void embedding(EmbeddingParams p);
void rmsnorm(RmsNormParams p);
void layernorm(LayerNormParams p);
void gemm(GemmParams p);
void rope(RopeParams p);
void kv_write(KvWriteParams p);
void mla_absorb_q(MlaAbsorbQParams p);
void mla_absorb_out(MlaAbsorbOutParams p);
void mla_attention_dense(MlaAttentionParams p);
void mla_attention_sparse(MlaAttentionParams p);
void index_k_write(IndexKWriteParams p);
void indexer_score(IndexerScoreParams p);
void topk_select(TopkParams p);
void router(RouterParams p);
void moe_experts(MoeExpertsParams p);  // synchronizes once (reads per-expert row counts to the host)
void silu_mul(SiluMulParams p);
void scale_add(ScaleAddParams p);
void mtp_input(MtpInputParams p);
void sample(SampleParams p);

}  // namespace tokenline::cuda
