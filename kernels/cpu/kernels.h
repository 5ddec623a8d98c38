// CPU reference kernels: plain loops over host memory, the ground truth every other backend is compared
// with. Each takes its parameter struct (kernels/params.h) by value; the destination is its first field.
// Thread-safe for distinct outputs; multi-threaded internally where the work is large.
#pragma once

#include "kernels/params.h"

namespace tokenline::cpu {

void embedding(EmbeddingParams p);
void rmsnorm(RmsNormParams p);
void layernorm(LayerNormParams p);
void gemm(GemmParams p);
void rope(RopeParams p);
void kv_write(KvWriteParams p);
void mla_absorb_q(MlaAbsorbQParams p);
void mla_absorb_out(MlaAbsorbOutParams p);
void mla_attention_dense(MlaAttentionParams p);   // ignores topk_indices
void mla_attention_sparse(MlaAttentionParams p);  // REQUIRES: topk_indices, topk > 0
void index_k_write(IndexKWriteParams p);
void indexer_score(IndexerScoreParams p);
void topk_select(TopkParams p);
void router(RouterParams p);
void moe_experts(MoeExpertsParams p);
void silu_mul(SiluMulParams p);
void scale_add(ScaleAddParams p);
void mtp_input(MtpInputParams p);
void sample(SampleParams p);
void gqa_kv_write(GqaKvWriteParams p);
void gqa_attention(GqaAttentionParams p);
void sigmoid_gate(SigmoidGateParams p);
void gdn_conv(GdnConvParams p);
void gdn_recurrence(GdnRecurrenceParams p);
void gated_rmsnorm(GatedRmsNormParams p);

}  // namespace tokenline::cpu
