#include "engine/model/memory.h"

#include <algorithm>
#include <cmath>

namespace tokenline {

WeightBytes weight_bytes_per_gpu(const CostModel& cm) {
  const ParamCounts p = count_params(cm.model);
  const Parallel& par = cm.parallel;
  const double bpp = cm.weight_bytes_per_param;
  WeightBytes w;
  w.routed_experts = p.routed_experts * bpp / par.ep / par.moe_tp();
  w.replicated = (p.total() - p.routed_experts) * bpp / par.tp;
  w.mtp = cm.options.mtp ? p.mtp * bpp / par.gpus() : 0;
  return w;
}

KvCapacity kv_capacity(const CostModel& cm, int64_t context, int64_t page_tokens) {
  const ModelConfig& m = cm.model;
  const Hardware& hw = cm.hardware;
  KvCapacity k;
  k.usable_hbm_bytes = hw.hbm_bytes * hw.usable_hbm_fraction;
  k.weight_bytes = weight_bytes_per_gpu(cm).total();
  k.activation_reserve_bytes =
      double(cm.options.max_chunk_tokens) * double(m.hidden) * 2 * kActivationBuffers;
  k.free_bytes = std::max(0.0, k.usable_hbm_bytes - k.weight_bytes - k.activation_reserve_bytes);
  k.weights_fit = k.usable_hbm_bytes > k.weight_bytes + k.activation_reserve_bytes;
  // Under TP the seed shards a request's KV over the rank's GPUs ("KV 也被切分到 8 张卡上").
  k.bytes_per_token = (double(cm.kv_bytes_token_layer) * m.layers +
                       double(cm.indexer_bytes_token_layer) * (m.has_indexer() ? m.indexer_full_layers : 0)) /
                      cm.parallel.tp;
  const double rank_free = k.free_bytes;  // one GPU's free bytes hold 1/tp of each of the rank's tokens
  k.tokens_per_rank = int64_t(std::floor(rank_free / k.bytes_per_token));
  k.pages_per_rank = page_tokens > 0 ? k.tokens_per_rank / page_tokens : 0;
  if (context > 0) {
    const int64_t pages_per_request = (context + page_tokens - 1) / page_tokens;
    const int64_t per_rank = page_tokens > 0 ? k.pages_per_rank / pages_per_request : 0;
    k.max_concurrent_requests = per_rank * cm.parallel.dp_attention;
  }
  return k;
}

}  // namespace tokenline
