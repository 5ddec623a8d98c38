#include "engine/runtime/model_shape.h"

#include "common/input_error.h"
#include "cost/step_cost.h"
#include "engine/model/kv_layout.h"
#include "engine/model/model_config.h"
#include "run/model_files.h"

namespace tokenline {
namespace {

constexpr Op kLedgerOps[kRunOpCount] = {
    Op::kEmbed,        Op::kRmsnorm,        Op::kAProj,         Op::kNormRopeKvWrite, Op::kQBProj,
    Op::kIndexerScore, Op::kTopkSelect,     Op::kSparseMla,     Op::kWindowAttn,      Op::kOProj,
    Op::kGdnProj,      Op::kGdnScan,        Op::kAttnAllreduce, Op::kDenseMlp,        Op::kRouter,
    Op::kDispatch,     Op::kExpertGemm,     Op::kSharedExpert,  Op::kCombine,         Op::kMlpAllreduce,
    Op::kLmHead,       Op::kVocabAllgather, Op::kSample,        Op::kMtpDraft,
};

int32_t narrow(int64_t v) {
  return static_cast<int32_t>(v);
}

// A GQA model's shape: what its layers mix with and the sizes the GQA / GDN kernels need. Refuses what the
// runner does not execute, naming it.
void gqa_shape(const ModelConfig& c, const std::string& model, ModelShape& s) {
  auto refuse = [&](const std::string& what, const std::string& found) {
    throw InputError("--model " + model, what, found);
  };
  if (c.chunked_attention() || c.mixer_layers(MixerKind::kMamba2) > 0)
    refuse("full, sliding-window or Gated DeltaNet layers", "chunked attention or Mamba-2 layers");
  if (c.mtp_layers > 0) refuse("no MTP layer on a GQA model", std::to_string(c.mtp_layers) + " MTP layers");
  // The CPU kernels run one head shape for every layer, values as wide as keys (kernels/params.h).
  if (c.full_layer_shape_differs())
    refuse("full layers of the window layers' head shape", "full layers of their own head width or KV heads");
  if (c.gqa_value_dim(false) != c.head_dim)
    refuse("values as wide as the keys (head_dim " + std::to_string(c.head_dim) + ")",
           "v_head_dim " + std::to_string(c.gqa_value_dim(false)));
  if (c.kv_heads <= 0 || c.heads % c.kv_heads != 0)
    refuse("kv_heads dividing the heads", std::to_string(c.kv_heads) + " for " + std::to_string(c.heads));
  s.gqa = true;
  s.kv_heads = c.kv_heads;
  s.head_dim = narrow(c.head_dim);
  s.qk_norm = c.qk_norm;
  s.attn_output_gate = c.attn_output_gate;
  s.attention_sinks = c.attention_sinks;
  s.window_tokens = narrow(c.window_tokens);
  s.gdn = GdnDims{.key_heads = c.gdn.key_heads,
                  .value_heads = c.gdn.value_heads,
                  .key_dim = narrow(c.gdn.key_head_dim),
                  .value_dim = narrow(c.gdn.value_head_dim),
                  .conv_kernel = narrow(c.gdn.conv_kernel)};
  if (c.linear_layers() > 0 &&
      (s.gdn.key_heads <= 0 || s.gdn.value_heads % s.gdn.key_heads != 0 || s.gdn.conv_kernel < 2))
    refuse("Gated DeltaNet key heads dividing its value heads, conv kernel >= 2", "'" + c.name + "'");
  s.mixers.clear();
  for (int l = 0; l < c.layers; ++l) {
    s.mixers.push_back(c.window_layer(l)   ? LayerMixer::kSlidingWindow
                       : c.linear_layer(l) ? LayerMixer::kGatedDeltaNet
                                           : LayerMixer::kAttention);
  }
  // BF16 keys and values per token and layer (the runner's GQA page layout, kernels/params.h).
  const int64_t kv_token = int64_t{4} * s.kv_heads * s.head_dim;
  s.kv_bytes_per_token = kv_token * s.mixer_layers(LayerMixer::kAttention);
  s.window_kv_bytes_per_token = kv_token * s.mixer_layers(LayerMixer::kSlidingWindow);
  s.state_bytes_per_request = 4 * s.gdn.state_floats() * s.mixer_layers(LayerMixer::kGatedDeltaNet);
}

}  // namespace

ModelShape load_model_shape(const std::string& model) {
  const ModelConfig c = load_model(model);
  const bool mla = c.attention == AttentionKind::kMla;
  // Layer kinds with no CPU or CUDA kernel here: refused naming the kernel and the layers sim prices.
  auto no_kernel = [&](const std::string& what) {
    return InputError("--model " + model,
                      "an MLA model with a DSA indexer (glm_moe_dsa, deepseek_v32) or a GQA model (the real "
                      "engine has no kernel of " +
                          what + " layers; sim and ledger price it)",
                      "'" + c.hf_model_type + "'");
  };
  if (c.mixer_layers(MixerKind::kKda) > 0)  // KDA's conv and delta rule
    throw no_kernel("Kimi Delta Attention, the kda_scan op of " +
                    std::to_string(c.mixer_layers(MixerKind::kKda)));
  if (c.has_block_sparse())  // MiniMax-M3's indexer and block-sparse attention
    throw no_kernel("MiniMax-M3's block-sparse attention, " +
                    std::to_string(c.mixer_layers(MixerKind::kBlockSparse)));
  if (c.attention == AttentionKind::kCompressed)  // no CPU or CUDA kernel of its compressed attention
    throw InputError(
        "--model " + model,
        "an MLA model with a DSA indexer (glm_moe_dsa, deepseek_v32) or a GQA model (the real engine "
        "has no kernel of DeepSeek-V4's compressed attention; sim and ledger price it)",
        "'" + c.hf_model_type + "'");
  if (mla && !c.has_indexer()) {
    throw InputError("--model " + model,
                     "an MLA model with a DSA indexer (glm_moe_dsa, deepseek_v32) or a GQA model",
                     "'" + c.hf_model_type + "'");
  }
  ModelShape s;
  s.name = c.name;
  s.layers = c.layers;
  s.dense_layers = c.dense_layers;
  s.hidden = narrow(c.hidden);
  s.heads = c.heads;
  s.experts = c.routed_experts;
  s.experts_per_token = c.experts_per_token;
  s.shared_experts = c.shared_experts;
  s.moe_inter = narrow(c.moe_intermediate);
  s.dense_inter = narrow(c.dense_intermediate);
  s.vocab = narrow(c.vocab);
  s.router_bias = c.router_score_bias;
  s.max_context_tokens = c.max_context_tokens;
  for (int i = 0; i < kRunOpCount; ++i) s.op_names[static_cast<size_t>(i)] = op_name(kLedgerOps[i]).data();
  if (!mla) {
    gqa_shape(c, model, s);
    s.indexer_full.assign(static_cast<size_t>(c.layers), 0);
    s.fp8_kv = false;
    return s;
  }
  s.mixers.assign(static_cast<size_t>(c.layers), LayerMixer::kAttention);
  s.q_lora = narrow(c.q_lora_rank);
  s.kv_lora = narrow(c.kv_lora_rank);
  s.nope = narrow(c.qk_nope_head_dim);
  s.rope = narrow(c.qk_rope_head_dim);
  s.v = narrow(c.v_head_dim);
  s.idx_heads = c.indexer_heads;
  s.idx_dim = narrow(c.indexer_head_dim);
  s.idx_topk = narrow(c.indexer_topk);
  for (int l = 0; l < c.layers; ++l) s.indexer_full.push_back(c.indexer_full_layer(l) ? 1 : 0);
  // One MTP layer is what the runner executes (GLM-5 and DeepSeek-V3 ship one); it scores with its own
  // indexer, as a full layer.
  s.mtp_layers = c.mtp_layers > 0 ? 1 : 0;
  if (s.mtp_layers > 0) s.indexer_full.push_back(1);
  s.fp8_kv = c.default_kv_layout == KvLayout::kFp8DsMla;
  s.kv_bytes_per_token = kv_bytes_per_token_layer(c.default_kv_layout, c) * c.layers;
  s.indexer_bytes_per_token = c.indexer_head_dim * 2 * c.indexer_full_layers;  // BF16 keys
  return s;
}

}  // namespace tokenline
