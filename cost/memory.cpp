#include "cost/memory.h"

#include <algorithm>
#include <cmath>

#include "engine/model/linear_state.h"

namespace tokenline {

WeightBytes weight_bytes_per_gpu(const CostModel& cm) {
  const ModelConfig& m = cm.model;
  const ParamCounts p = count_params(m);
  const Parallel& par = cm.parallel;
  WeightBytes w;
  if (uniform_weight_bytes(m)) {  // one rate for all: the sums kept as before, bit for bit
    const double bpp = group_bytes_per_param(m, WeightGroup::kAttention);
    w.routed_experts = p.routed_experts * bpp / par.ep / par.moe_tp();
    w.replicated = (p.total() - p.routed_experts) * bpp / par.tp;
    if (p.latent_proj > 0) w.replicated += p.latent_proj * bpp * (1 - 1.0 / par.tp);  // whole on every GPU
    w.mtp = cm.options.mtp ? p.mtp * bpp / par.gpus() : 0;
    return w;
  }
  auto bytes = [&](WeightGroup g) { return group_params(p, g) * group_bytes_per_param(m, g); };
  w.routed_experts = bytes(WeightGroup::kRoutedExperts) / par.ep / par.moe_tp();
  for (const WeightGroup g :
       {WeightGroup::kAttention, WeightGroup::kIndexer, WeightGroup::kDenseMlp, WeightGroup::kSharedExperts,
        WeightGroup::kRouter, WeightGroup::kNorms, WeightGroup::kEmbed, WeightGroup::kLmHead})
    w.replicated += bytes(g) / par.tp;
  // A latent MoE's projections are ReplicatedLinear (vLLM nemotron_h.py): whole on every GPU, not TP-split.
  if (p.latent_proj > 0)
    w.replicated +=
        p.latent_proj * group_bytes_per_param(m, WeightGroup::kSharedExperts) * (1 - 1.0 / par.tp);
  w.mtp = cm.options.mtp ? bytes(WeightGroup::kMtp) / par.gpus() : 0;
  return w;
}

namespace {

// Splits free bytes between the full layers' tokens and the window pool by the engine's rule (kv_capacity).
void split_window_pool(const EngineBehavior& b, const CostModel& cm, int64_t page_tokens, int64_t max_running,
                       int64_t step_tokens, KvCapacity& k) {
  const double full = k.bytes_per_token, window = k.window_bytes_per_token;
  const int64_t running = max_running > 0 ? max_running : b.max_running_requests;
  if (b.window_pool == WindowPoolRule::kSharedPool && running > 0 && page_tokens > 0) {
    // The window group's most (window_kv.h, hold_step_context): every running request's ceil(W / page) + 1
    // pages, one more for the page its step's first query starts in, and the pages a step's prefill chunks
    // hold besides their windows until their next grow - at most two steps' token budgets (the last step's,
    // not yet dropped, and this one's), since every running request grows each step.
    const int64_t per_request = (cm.model.window_tokens + page_tokens - 1) / page_tokens + 2;
    const int64_t step_pages = (std::max<int64_t>(0, step_tokens) + page_tokens - 1) / page_tokens;
    const double most =
        (double(running) * double(per_request) + 2.0 * double(step_pages)) * double(page_tokens);
    const double window_tokens = std::min(most, k.free_bytes / (full + window));
    k.window_tokens_per_rank = int64_t(window_tokens);
    k.tokens_per_rank = int64_t(std::floor((k.free_bytes - window_tokens * window) / full));
    return;
  }
  // SGLang: full x full_bytes + ratio x full x window_bytes = free (per layer: the denominator ratio x
  // swa_layers + full_layers of model_runner.py).
  const double r = b.swa_full_tokens_ratio;
  k.tokens_per_rank = int64_t(std::floor(k.free_bytes / (full + r * window)));
  k.window_tokens_per_rank = int64_t(double(k.tokens_per_rank) * r);
}

}  // namespace

KvShare kv_share_per_gpu(const CostModel& cm, KvPlacement placement) {
  const int64_t tp = cm.parallel.tp;
  switch (placement) {
    case KvPlacement::kShardedOverTp:
      // The seed shards a request's KV over the rank's GPUs ("KV 也被切分到 8 张卡上").
      return {1, tp};
    case KvPlacement::kPerTpRank:
      if (cm.model.attention == AttentionKind::kMla) return {1, 1};
      {
        const int64_t heads = std::max(1, cm.model.kv_heads);
        return {std::max<int64_t>(1, (heads + tp - 1) / tp), heads};
      }
  }
  return {1, 1};
}

KvShare indexer_share_per_gpu(const CostModel& cm, KvPlacement placement) {
  // MiniMax-M3's index key is one shared head that every GPU of the rank holds whole (vLLM
  // MiniMaxM3QKVParallelLinearWithIndexer replicates index_k); DSA's indexer cache follows the main KV.
  if (cm.model.has_block_sparse() && placement == KvPlacement::kPerTpRank) return {1, 1};
  return kv_share_per_gpu(cm, placement);
}

KvTokenBytes kv_bytes_per_token_per_gpu(const CostModel& cm, KvPlacement placement) {
  const ModelConfig& m = cm.model;
  const KvShare s = kv_share_per_gpu(cm, placement), si = indexer_share_per_gpu(cm, placement);
  const double main = cm.context_kv_bytes_token();
  const double indexer = double(cm.indexer_bytes_token_layer) * m.indexer_cache_layers();
  const double window = double(cm.window_kv_bytes_token_layer) * cm.window_layers;
  return {main * double(s.num) / double(s.den), indexer * double(si.num) / double(si.den),
          window * double(s.num) / double(s.den)};
}

KvPageBytes kv_page_bytes(const CostModel& cm, KvPlacement placement, int64_t page_tokens) {
  const ModelConfig& m = cm.model;
  const KvShare s = kv_share_per_gpu(cm, placement), si = indexer_share_per_gpu(cm, placement);
  const int64_t indexer_layers = m.indexer_cache_layers();
  const int64_t compressed = std::llround(cm.compressed_kv_bytes_token * double(page_tokens));
  return {(cm.kv_bytes_token_layer * cm.full_attention_layers * page_tokens + compressed) * s.num / s.den,
          cm.indexer_bytes_token_layer * indexer_layers * page_tokens * si.num / si.den,
          cm.window_kv_bytes_token_layer * cm.window_layers * page_tokens * s.num / s.den};
}

StateCapacity linear_state_capacity(const CostModel& cm, const EngineBehavior& behavior, double free_bytes) {
  StateCapacity s;
  s.bytes_per_slot = linear_state_bytes_per_request(cm.model, cm.parallel.tp);
  if (s.bytes_per_slot <= 0 || free_bytes <= 0) return s;
  if (behavior.engine == "sglang") {
    const SglangStateSlots sglang = sglang_state_slots(behavior, free_bytes, s.bytes_per_slot);
    s.slots_per_rank = sglang.slots;
    s.slots_per_running_request = sglang.slots_per_running_request;
  } else {
    s.slots_per_rank = ratio_state_slots(free_bytes, s.bytes_per_slot);
  }
  s.bytes = double(s.slots_per_rank) * double(s.bytes_per_slot);
  return s;
}

KvCapacity kv_capacity(const CostModel& cm, int64_t context, int64_t page_tokens) {
  EngineBehavior seed = seed_behavior();
  seed.chunked_prefill_size = cm.options.max_chunk_tokens;
  return kv_capacity(cm, seed, context, page_tokens);
}

KvCapacity kv_capacity(const CostModel& cm, const EngineBehavior& behavior, int64_t context,
                       int64_t page_tokens, int64_t max_running) {
  const ModelConfig& m = cm.model;
  const Hardware& hw = cm.hardware;
  const ResolvedEngine e = resolve_engine(behavior, hw, cm.parallel.tp, cm.parallel.dp_attention);
  const MemoryRule rule = behavior.memory_rule;
  KvCapacity k;
  k.mem_fraction = e.mem_fraction;
  k.usable_hbm_bytes =
      rule == MemoryRule::kStaticFraction ? (e.device_memory_bytes - e.startup_memory_bytes) * e.mem_fraction
      : rule == MemoryRule::kFreeFraction ? e.device_memory_bytes - e.startup_memory_bytes
                                          : e.device_memory_bytes * e.mem_fraction - e.startup_memory_bytes;
  k.reserved_bytes = rule == MemoryRule::kStaticFraction ? e.reserved_bytes : 0;
  k.weight_bytes = weight_bytes_per_gpu(cm).total();
  // Attention residuals (Kimi-K3) keep every block's snapshot of each chunk token's hidden state live
  // through the forward (modeling_kimi.py's block_residual): ceil(layers / attn_res_block) hidden-sized
  // buffers more, taken inside the fraction under every rule (an engine's own reserve outside it was not
  // sized for them).
  const double snapshots = m.attn_res_block > 0 ? std::ceil(double(m.layers) / m.attn_res_block) : 0;
  k.activation_reserve_bytes =
      rule != MemoryRule::kStaticFraction
          ? double(e.chunk_tokens) * double(m.hidden) * 2 * (kActivationBuffers + snapshots)
          : double(e.chunk_tokens) * double(m.hidden) * 2 * snapshots;
  k.free_bytes = std::max(0.0, k.usable_hbm_bytes - k.weight_bytes - k.activation_reserve_bytes);
  // TensorRT-LLM: the KV cache takes its fraction of what is left (KvCacheConfig.free_gpu_memory_fraction).
  if (rule == MemoryRule::kFreeFraction) k.free_bytes *= e.mem_fraction;
  k.state = linear_state_capacity(cm, behavior, k.free_bytes);
  k.free_bytes -= k.state.bytes;
  k.weights_fit = k.usable_hbm_bytes > k.weight_bytes + k.activation_reserve_bytes;
  // Summed before the share is taken, so the seed's figure stays bit-identical: (KV + indexer) / tp.
  // MiniMax-M3's index keys take a share of their own (indexer_share_per_gpu): the per-GPU sum
  // kv_bytes_per_token_per_gpu gives.
  const KvShare share = kv_share_per_gpu(cm, behavior.kv_placement);
  k.bytes_per_token =
      m.has_block_sparse()
          ? kv_bytes_per_token_per_gpu(cm, behavior.kv_placement).total()
          : (cm.context_kv_bytes_token() + double(cm.indexer_bytes_token_layer) * m.indexer_cache_layers()) *
                double(share.num) / double(share.den);
  // Every GPU of a rank holds its share of each of the rank's tokens, so one GPU's free bytes bound them.
  if (cm.window_layers > 0) {
    k.window_bytes_per_token =
        double(cm.window_kv_bytes_token_layer) * cm.window_layers * double(share.num) / double(share.den);
    split_window_pool(behavior, cm, page_tokens, max_running, e.rank_chunk_tokens, k);
    k.window_pages_per_rank = page_tokens > 0 ? k.window_tokens_per_rank / page_tokens : 0;
  } else {
    k.tokens_per_rank = int64_t(std::floor(k.free_bytes / k.bytes_per_token));
  }
  k.pages_per_rank = page_tokens > 0 ? k.tokens_per_rank / page_tokens : 0;
  if (context > 0) {
    const int64_t pages_per_request = (context + page_tokens - 1) / page_tokens;
    int64_t per_rank = page_tokens > 0 ? k.pages_per_rank / pages_per_request : 0;
    if (k.state.slots_per_rank > 0) per_rank = std::min(per_rank, k.state.max_running_per_rank());
    k.max_concurrent_requests = per_rank * cm.parallel.dp_attention;
  }
  return k;
}

}  // namespace tokenline
