// Names and collective kinds of the ledger's ops; the static tables behind op_name() and friends.
#include "engine/model/ledger.h"

namespace tokenline {

std::optional<Op> find_op(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i)
    if (op_name(Op(i)) == name) return Op(i);
  return std::nullopt;
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kEmbed:
      return "embed";
    case Op::kEmbedAllreduce:
      return "embed_allreduce";
    case Op::kDpAllgather:
      return "dp_allgather";
    case Op::kRmsnorm:
      return "rmsnorm";
    case Op::kAttnRes:
      return "attn_res";
    case Op::kAProj:
      return "a_proj";
    case Op::kQkNormAllreduce:
      return "qk_norm_allreduce";
    case Op::kNormRopeKvWrite:
      return "norm_rope_kv_write";
    case Op::kQBProj:
      return "q_b_proj";
    case Op::kIndexerScore:
      return "indexer_score";
    case Op::kTopkSelect:
      return "topk_select";
    case Op::kSparseMla:
      return "sparse_mla";
    case Op::kWindowAttn:
      return "window_attention";
    case Op::kOProj:
      return "o_proj";
    case Op::kGdnProj:
      return "gdn_proj";
    case Op::kGdnScan:
      return "gdn_scan";
    case Op::kMamba2Proj:
      return "mamba2_proj";
    case Op::kMamba2Scan:
      return "mamba2_scan";
    case Op::kKdaProj:
      return "kda_proj";
    case Op::kKdaScan:
      return "kda_scan";
    case Op::kAttnAllreduce:
      return "attn_allreduce";
    case Op::kReduceScatter:
      return "reduce_scatter";
    case Op::kDenseMlp:
      return "dense_mlp";
    case Op::kDenseAllreduce:
      return "dense_allreduce";
    case Op::kRouter:
      return "router";
    case Op::kLatentProj:
      return "latent_proj";
    case Op::kDispatch:
      return "dispatch";
    case Op::kExpertGemm:
      return "expert_gemm";
    case Op::kSharedExpert:
      return "shared_expert";
    case Op::kCombine:
      return "combine";
    case Op::kMlpAllreduce:
      return "mlp_allreduce";
    case Op::kLmHead:
      return "lm_head";
    case Op::kVocabAllgather:
      return "vocab_allgather";
    case Op::kSample:
      return "sample";
    case Op::kMtpDraft:
      return "mtp_draft";
    case Op::kCount:
      return "?";
  }
  return "?";
}

std::string_view collective_kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kNone:
      return "none";
    case CollectiveKind::kAllReduce:
      return "allreduce";
    case CollectiveKind::kAllGather:
      return "allgather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllToAll:
      return "alltoall";
  }
  return "?";
}

int collective_group(Op op, const Parallel& parallel) {
  switch (op_collective(op)) {
    case CollectiveKind::kNone:
      return 0;
    case CollectiveKind::kAllToAll:
      return parallel.ep;
    case CollectiveKind::kAllReduce:
      return op == Op::kAttnAllreduce || op == Op::kMlpAllreduce || op == Op::kQkNormAllreduce
                 ? parallel.tp
                 : parallel.gpus();
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return parallel.gpus();
  }
  return 0;
}

std::string_view link_name(Link link) {
  switch (link) {
    case Link::kNvlink:
      return "nvlink";
    case Link::kIb:
      return "ib";
  }
  return "?";
}

}  // namespace tokenline
