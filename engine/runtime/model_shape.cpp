#include "engine/runtime/model_shape.h"

#include "common/input_error.h"
#include "cost/step_cost.h"
#include "engine/model/kv_layout.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"

namespace tokenline {
namespace {

constexpr Op kLedgerOps[kRunOpCount] = {
    Op::kEmbed,        Op::kRmsnorm,      Op::kAProj,     Op::kNormRopeKvWrite, Op::kQBProj,
    Op::kIndexerScore, Op::kTopkSelect,   Op::kSparseMla, Op::kOProj,           Op::kAttnAllreduce,
    Op::kDenseMlp,     Op::kRouter,       Op::kDispatch,  Op::kExpertGemm,      Op::kSharedExpert,
    Op::kCombine,      Op::kMlpAllreduce, Op::kLmHead,    Op::kVocabAllgather,  Op::kSample,
    Op::kMtpDraft,
};

int32_t narrow(int64_t v) {
  return static_cast<int32_t>(v);
}

}  // namespace

ModelShape load_model_shape(const std::string& model) {
  const ModelConfig c = load_model(model);
  if (c.attention != AttentionKind::kMla || !c.has_indexer()) {
    throw InputError("--model " + model, "an MLA model with a DSA indexer (glm_moe_dsa, deepseek_v32)",
                     "'" + c.hf_model_type + "'");
  }
  ModelShape s;
  s.name = c.name;
  s.layers = c.layers;
  s.dense_layers = c.dense_layers;
  s.hidden = narrow(c.hidden);
  s.heads = c.heads;
  s.q_lora = narrow(c.q_lora_rank);
  s.kv_lora = narrow(c.kv_lora_rank);
  s.nope = narrow(c.qk_nope_head_dim);
  s.rope = narrow(c.qk_rope_head_dim);
  s.v = narrow(c.v_head_dim);
  s.experts = c.routed_experts;
  s.experts_per_token = c.experts_per_token;
  s.shared_experts = c.shared_experts;
  s.moe_inter = narrow(c.moe_intermediate);
  s.dense_inter = narrow(c.dense_intermediate);
  s.vocab = narrow(c.vocab);
  s.idx_heads = c.indexer_heads;
  s.idx_dim = narrow(c.indexer_head_dim);
  s.idx_topk = narrow(c.indexer_topk);
  for (int l = 0; l < c.layers; ++l) s.indexer_full.push_back(c.indexer_full_layer(l) ? 1 : 0);
  // One MTP layer is what the runner executes (GLM-5 and DeepSeek-V3 ship one); it scores with its own
  // indexer, as a full layer.
  s.mtp_layers = c.mtp_layers > 0 ? 1 : 0;
  if (s.mtp_layers > 0) s.indexer_full.push_back(1);
  s.max_context_tokens = c.max_context_tokens;
  s.fp8_kv = c.default_kv_layout == KvLayout::kFp8DsMla;
  s.kv_bytes_per_token = kv_bytes_per_token_layer(c.default_kv_layout, c) * c.layers;
  s.indexer_bytes_per_token = c.indexer_head_dim * 2 * c.indexer_full_layers;  // BF16 keys
  for (int i = 0; i < kRunOpCount; ++i) s.op_names[static_cast<size_t>(i)] = op_name(kLedgerOps[i]).data();
  return s;
}

}  // namespace tokenline
