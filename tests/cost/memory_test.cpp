#include "cost/memory.h"

#include <catch2/catch.hpp>

#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {
CostModel cm_for(const char* model, const char* parallel, KvLayout layout = KvLayout::kFp8DsMla) {
  return make_cost_model(model_preset(model), parse_parallel(parallel, "t"), layout, load_hardware("h200"));
}
}  // namespace

TEST_CASE("Weights per GPU: EP splits experts, TP splits everything", "[memory]") {
  const WeightBytes ep = weight_bytes_per_gpu(cm_for("glm-5.3", "dp8-ep8"));
  const WeightBytes tp = weight_bytes_per_gpu(cm_for("glm-5.3", "tp8"));
  CHECK(ep.routed_experts == Approx(tp.routed_experts));
  CHECK(ep.replicated == Approx(8 * tp.replicated));
  CHECK(tp.total() * 8 == Approx(count_params(model_preset("glm-5.3")).total()));  // FP8: 1 B per param
  const WeightBytes llama = weight_bytes_per_gpu(cm_for("llama-3.1-70b", "tp8", KvLayout::kBf16));
  CHECK(llama.total() * 8 == Approx(70.6e9 * 2).epsilon(0.01));
}

TEST_CASE("KV capacity shrinks with context and says when weights do not fit", "[memory]") {
  const CostModel cm = cm_for("glm-5.3", "tp8");
  const KvCapacity k = kv_capacity(cm, 131072);
  CHECK(k.weights_fit);
  CHECK(k.activation_reserve_bytes == 32768.0 * 6144 * 2 * kActivationBuffers);
  CHECK(k.pages_per_rank == k.tokens_per_rank / kDefaultPageTokens);
  CHECK(kv_capacity(cm, 1 << 20).max_concurrent_requests < k.max_concurrent_requests);
  const KvCapacity one = kv_capacity(cm_for("glm-5.3", "tp1"), 4096);
  CHECK_FALSE(one.weights_fit);
  CHECK(one.free_bytes == 0);
  CHECK(one.max_concurrent_requests == 0);
  // DP attention keeps each rank's KV whole: 8 ranks x per-rank requests.
  const KvCapacity dp = kv_capacity(cm_for("glm-5.3", "dp8-ep8"), 32768);
  CHECK(dp.max_concurrent_requests % 8 == 0);
  CHECK(dp.max_concurrent_requests > 0);
}

namespace {
// Qwen3-235B-A22B (shared/calibration models/Qwen--Qwen3-235B-A22B-FP8_config.json): GQA with 4 KV heads,
// 128 routed experts top-8, no shared expert, FP8 weights.
ModelConfig qwen3_235b() {
  ModelConfig c;
  c.name = "qwen3-235b-a22b";
  c.hf_model_type = "qwen3_moe";
  c.attention = AttentionKind::kGqa;
  c.layers = 94;
  c.hidden = 4096;
  c.heads = 64;
  c.kv_heads = 4;
  c.head_dim = 128;
  c.routed_experts = 128;
  c.experts_per_token = 8;
  c.moe_intermediate = 1536;
  c.vocab = 151936;
  c.max_context_tokens = 40960;
  c.weight_dtype = Dtype::kFp8;
  c.default_kv_layout = KvLayout::kBf16;
  return c;
}
CostModel cm_of(const ModelConfig& m, const char* parallel) {
  return make_cost_model(m, parse_parallel(parallel, "t"), m.default_kv_layout, load_hardware("h200"));
}
// SGLang on a device of the H200 datasheet's 1.41e11 B (134,469 MiB), the figure these cases' arithmetic
// uses; on h200.json an engine sees the driver's 143,771 MiB (the start-up case below).
EngineBehavior sglang_on_datasheet() {
  EngineBehavior b = sglang_behavior();
  b.device_memory_bytes = 1.41e11;
  return b;
}
}  // namespace

TEST_CASE("KV replication (issue 11): DeepSeek-V3 tp8 on H200 holds 8x fewer KV tokens per GPU than sharded",
          "[memory][engine]") {
  // SGLang keeps the whole MLA latent on every TP rank: BF16 (kv_cache_dtype auto) 512 + 64 dims x 2 B
  // x 61 layers = 70,272 B per token per GPU. mem_fraction_static on a 1.41e11 B device (134,469 MiB),
  // tp8: reserved 512 + 8192 x 1.5 + 512 x 2 + 8/8 x 1024 = 14,848 MiB -> 1 - 14,848 / 134,469 = 0.890.
  const CostModel cm = cm_of(model_preset("deepseek-v3"), "tp8");
  const EngineBehavior sglang = sglang_on_datasheet();
  EngineBehavior sharded = sglang;
  sharded.kv_placement = KvPlacement::kShardedOverTp;
  const KvCapacity k = kv_capacity(cm, sglang, 163840);
  const KvCapacity s = kv_capacity(cm, sharded, 163840);
  CHECK(k.bytes_per_token == 70272);
  CHECK(s.bytes_per_token * 8 == k.bytes_per_token);
  CHECK(k.mem_fraction == Approx(0.890));
  CHECK(k.free_bytes == s.free_bytes);
  CHECK(s.tokens_per_rank / 8 == k.tokens_per_rank);
  // (0.890 x 1.41e11 - 83.88e9 weights) / 70,272 B: SGLang logs a few hundred thousand tokens here.
  CHECK(k.tokens_per_rank == 592151);
  CHECK(k.reserved_bytes == Approx(0.110 * 1.41e11));
  CHECK(derived_max_running_requests(k.tokens_per_rank, 163840) == 2048);
}

TEST_CASE("Start-up memory: SGLang sizes from what is free after it, vLLM takes it out of its share",
          "[memory][engine]") {
  constexpr double kMib = 1024.0 * 1024.0;
  const CostModel cm = cm_of(model_preset("deepseek-v3"), "tp8");
  EngineBehavior sglang = sglang_behavior();
  sglang.device_memory_bytes = 143771 * kMib;  // what an H200 reports
  const KvCapacity device_only = kv_capacity(cm, sglang, 163840);
  sglang.startup_memory_bytes = 3186 * kMib;
  const KvCapacity k = kv_capacity(cm, sglang, 163840);
  // mem_fraction_static comes from the device total: 1 - 14,848 / 143,771 = 0.8967 -> 0.897.
  CHECK(k.mem_fraction == Approx(0.897));
  CHECK(k.usable_hbm_bytes == Approx((143771 - 3186) * kMib * 0.897));
  CHECK(k.reserved_bytes == Approx((143771 - 3186) * kMib * 0.103));
  CHECK(device_only.free_bytes - k.free_bytes == Approx(3186 * kMib * 0.897));
  // (0.897 x 140,585 MiB - 83.88e9 weights) / 70,272 B; 592,151 on the datasheet's 1.41e11 B.
  CHECK(k.tokens_per_rank == 688070);
  EngineBehavior vllm = vllm_behavior();
  vllm.device_memory_bytes = 143771 * kMib;
  const KvCapacity v0 = kv_capacity(cm, vllm, 163840);
  vllm.startup_memory_bytes = 3186 * kMib;
  const KvCapacity v = kv_capacity(cm, vllm, 163840);
  CHECK(v.usable_hbm_bytes == Approx(143771 * kMib * 0.9 - 3186 * kMib));
  CHECK(v0.free_bytes - v.free_bytes == Approx(3186 * kMib));
}

TEST_CASE("GQA under TP: each GPU keeps its KV heads, at least one (Qwen3-235B, 4 KV heads)",
          "[memory][engine]") {
  // 2 x 4 heads x 128 dims x 2 B x 94 layers = 192,512 B per token over all heads.
  const EngineBehavior b = sglang_on_datasheet();
  const CostModel tp4 = cm_of(qwen3_235b(), "tp4");
  const CostModel tp8 = cm_of(qwen3_235b(), "tp8");
  CHECK(kv_bytes_per_token_per_gpu(tp4, KvPlacement::kPerTpRank).main == 192512 / 4);
  CHECK(kv_bytes_per_token_per_gpu(tp8, KvPlacement::kPerTpRank).main == 192512 / 4);  // 1 head, twice held
  CHECK(kv_bytes_per_token_per_gpu(tp8, KvPlacement::kShardedOverTp).main == 192512 / 8);
  CHECK(kv_capacity(tp4, b, 40960).tokens_per_rank == 1395021);
  CHECK(kv_capacity(tp8, b, 40960).tokens_per_rank == 1996827);
}

TEST_CASE("Llama-3.1-8B tp1 on H200 under SGLang's mem_fraction_static", "[memory][engine]") {
  // tp1: reserved 512 + 12,288 + 256 x 2 + 1/8 x 1024 = 13,440 MiB -> fraction 0.900; BF16 weights
  // 16.06 GB; KV 2 x 8 x 128 x 2 B x 32 layers = 131,072 B per token.
  const CostModel cm = cm_of(model_preset("llama-3.1-8b"), "tp1");
  const KvCapacity k = kv_capacity(cm, sglang_on_datasheet(), 131072);
  CHECK(k.mem_fraction == Approx(0.900));
  CHECK(k.bytes_per_token == 131072);
  CHECK(k.tokens_per_rank == 845638);
  EngineBehavior lower = sglang_on_datasheet();
  lower.mem_fraction_static = 0.8;  // --mem-fraction-static 0.8 leaves 0.1 x 141 GB less for KV
  CHECK(kv_capacity(cm, lower, 131072).free_bytes == Approx(k.free_bytes - 0.1 * 1.41e11));
}

TEST_CASE("kv_page_bytes: sharded is the seed's divide-by-tp, per-rank replicates MLA", "[memory][engine]") {
  const CostModel cm = cm_for("glm-5.3", "tp8");
  const KvPageBytes sharded = kv_page_bytes(cm, KvPlacement::kShardedOverTp, 64);
  const KvPageBytes per_rank = kv_page_bytes(cm, KvPlacement::kPerTpRank, 64);
  CHECK(sharded.main == 656 * 78 * 64 / 8);
  CHECK(sharded.indexer == 132 * 21 * 64 / 8);
  CHECK(per_rank.main == 8 * sharded.main);
  CHECK(per_rank.indexer == 8 * sharded.indexer);
}

TEST_CASE("The seed's capacity is the seed behaviour with the cost model's chunk", "[memory][engine]") {
  const CostModel cm = cm_for("glm-5.3", "tp8");
  EngineBehavior seed = seed_behavior();
  seed.chunked_prefill_size = cm.options.max_chunk_tokens;
  const KvCapacity a = kv_capacity(cm, 131072);
  const KvCapacity b = kv_capacity(cm, seed, 131072);
  CHECK(a.tokens_per_rank == b.tokens_per_rank);
  CHECK(a.activation_reserve_bytes == b.activation_reserve_bytes);
  CHECK(a.mem_fraction == 0.9);  // the hardware JSON's usable fraction
  CHECK(a.reserved_bytes == 0);
}

TEST_CASE("TensorRT-LLM's KV is its fraction of what is free after start-up, weights and activations",
          "[memory][engine]") {
  // Llama-3.1-70B BF16 tp8 on H200, as TensorRT-LLM's free_gpu_memory_fraction 0.9 sizes it.
  const CostModel cm = cm_for("llama-3.1-70b", "tp8", KvLayout::kBf16);
  EngineBehavior t = trtllm_behavior();
  t.startup_memory_bytes = 3186 * 1024.0 * 1024.0;
  const KvCapacity k = kv_capacity(cm, t, 8192, kDefaultPageTokens);
  const double device = 143771 * 1024.0 * 1024.0;  // h200.json hbm.device_mib
  const double activations = 8192.0 * 8192 * 2 * kActivationBuffers;
  CHECK(k.usable_hbm_bytes == Approx(device - t.startup_memory_bytes));
  CHECK(k.activation_reserve_bytes == Approx(activations));
  CHECK(k.free_bytes == Approx(0.9 * (device - t.startup_memory_bytes - k.weight_bytes - activations)));
  // The same device under vLLM's rule (0.9 of the device, start-up out of it) keeps less for KV.
  EngineBehavior v = vllm_behavior();
  v.startup_memory_bytes = t.startup_memory_bytes;
  CHECK(kv_capacity(cm, v, 8192, kDefaultPageTokens).free_bytes < k.free_bytes);
}
