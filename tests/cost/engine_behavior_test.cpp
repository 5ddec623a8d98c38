#include "cost/engine_behavior.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"

using namespace tokenline;

namespace {
constexpr double kH200Bytes = 1.41e11;  // the hardware JSON's hbm.bytes (134,469 MiB)
constexpr double kMib = 1024.0 * 1024.0;
constexpr double kH100Bytes = 81559 * kMib;  // an 80 GB H100 as torch reports it
constexpr double kRtx4090Bytes = 24 * 1024 * kMib;
}  // namespace

TEST_CASE("SGLang on H200: chunk, CUDA-graph batch and mem_fraction_static as _handle_gpu_memory_settings",
          "[engine_behavior]") {
  const EngineBehavior b = sglang_behavior();
  // tp1: 512 + 8192 x 1.5 + 256 x 2 + 1/8 x 1024 = 13,440 MiB kept back -> 1 - 13,440 / 134,469 = 0.900
  const ResolvedEngine tp1 = resolve_engine(b, kH200Bytes, 0.9, 1, 1);
  CHECK(tp1.chunk_tokens == 8192);
  CHECK(tp1.cuda_graph_max_bs == 256);
  CHECK(tp1.mem_fraction == Approx(0.900));
  // tp8: 512 + 12,288 + 512 x 2 + 1,024 = 14,848 MiB -> 0.890
  const ResolvedEngine tp8 = resolve_engine(b, kH200Bytes, 0.9, 8, 1);
  CHECK(tp8.cuda_graph_max_bs == 512);
  CHECK(tp8.mem_fraction == Approx(0.890));
  CHECK(tp8.reserved_bytes == Approx(0.110 * kH200Bytes));
  // DP attention over 8 ranks adds 512 x 8 x 3 + 512 x 8 x 1.5 (graph batch above 300) = 18,432 MiB -> 1 -
  // 33,280 / 134,468 = 0.7525 -> 0.753
  CHECK(resolve_engine(b, kH200Bytes, 0.9, 8, 8).mem_fraction == Approx(0.753));
  // H100 80 GB, tp8: same band, (81,559 - 14,848) / 81,559 = 0.818
  CHECK(resolve_engine(b, kH100Bytes, 0.9, 8, 1).mem_fraction == Approx(0.818));
  // A 24 GB card, tp1: chunk 2048, graphs 24, 512 + 3072 + 48 + 128 = 3,760 MiB, no 10 GiB floor -> 0.847
  const ResolvedEngine small = resolve_engine(b, kRtx4090Bytes, 0.9, 1, 1);
  CHECK(small.chunk_tokens == 2048);
  CHECK(small.cuda_graph_max_bs == 24);
  CHECK(small.mem_fraction == Approx(0.847));
}

TEST_CASE("Explicit values override what resolve_engine derives", "[engine_behavior]") {
  EngineBehavior b = sglang_behavior();
  b.mem_fraction_static = 0.8;
  b.chunked_prefill_size = 4096;
  b.cuda_graph_max_bs = 64;
  b.device_memory_bytes = 143771 * kMib;
  const ResolvedEngine r = resolve_engine(b, kH200Bytes, 0.9, 8, 1);
  CHECK(r.mem_fraction == 0.8);
  CHECK(r.chunk_tokens == 4096);
  CHECK(r.cuda_graph_max_bs == 64);
  CHECK(r.device_memory_bytes == 143771 * kMib);
  CHECK(r.reserved_bytes == Approx(0.2 * 143771 * kMib));
}

TEST_CASE("SGLang splits its chunk over DP-attention ranks, vLLM, the seed and a rank's --chunk do not",
          "[engine_behavior]") {
  EngineBehavior b = sglang_behavior();
  // H200's 8192 over 8 DP-attention ranks: 1024 a rank; the memory rule still reads the whole 8192.
  const ResolvedEngine dp8 = resolve_engine(b, kH200Bytes, 0.9, 8, 8);
  CHECK(dp8.chunk_tokens == 8192);
  CHECK(dp8.rank_chunk_tokens == 1024);
  CHECK(dp8.mem_fraction == Approx(0.753));
  CHECK(resolve_engine(b, kH200Bytes, 0.9, 8, 1).rank_chunk_tokens == 8192);  // no DP attention: whole
  b.chunked_prefill_size = 262144;  // a recipe's --chunked-prefill-size on DP8
  CHECK(resolve_engine(b, kH200Bytes, 0.9, 8, 8).rank_chunk_tokens == 32768);
  b.chunk_split_over_dp = false;  // `sim --chunk`: already one rank's
  CHECK(resolve_engine(b, kH200Bytes, 0.9, 8, 8).rank_chunk_tokens == 262144);
  CHECK(resolve_engine(vllm_behavior(), kH200Bytes, 0.9, 8, 8).rank_chunk_tokens == 8192);
  EngineBehavior seed = seed_behavior();
  seed.chunked_prefill_size = 32768;
  CHECK(resolve_engine(seed, kH200Bytes, 0.9, 8, 8).rank_chunk_tokens == 32768);
}

TEST_CASE("A DP-attention rank estimates with SGLang's conservativeness x 0.3", "[engine_behavior]") {
  const TokenRatio t = sglang_behavior().ratio;
  const TokenRatio dp = t.for_dp_attention(8);
  CHECK(dp.init == Approx(0.21));
  CHECK(dp.min_ratio() == Approx(0.21 * 0.14));
  CHECK(dp.decay_per_step() == Approx((0.21 - 0.21 * 0.14) / 600));
  CHECK(t.for_dp_attention(1).init == Approx(0.7));
  TokenRatio loose = t;
  loose.init = 1.0;
  loose.dp_attention_conservativeness = 1.0;
  CHECK(loose.for_dp_attention(8).init == 1.0);
}

TEST_CASE("vLLM and the seed take the hardware's or their own utilization and keep KV as they do",
          "[engine_behavior]") {
  const EngineBehavior v = vllm_behavior();
  CHECK(v.admission == Admission::kIncremental);
  CHECK(v.mixed_steps);
  CHECK(v.kv_placement == KvPlacement::kPerTpRank);
  CHECK(resolve_engine(v, kH200Bytes, 0.5, 8, 1).mem_fraction == 0.9);
  const EngineBehavior s = seed_behavior();
  CHECK(s.kv_placement == KvPlacement::kShardedOverTp);
  CHECK(s.admission == Admission::kWholeRequest);
  CHECK(resolve_engine(s, kH200Bytes, 0.85, 8, 1).mem_fraction == 0.85);
  const EngineBehavior g = sglang_behavior();
  CHECK(g.admission == Admission::kEstimate);
  CHECK_FALSE(g.mixed_steps);
  CHECK(g.ratio.min_ratio() == Approx(0.098));
  CHECK(g.ratio.decay_per_step() == Approx((0.7 - 0.098) / 600));
}

TEST_CASE("TensorRT-LLM's engine block keeps its documented defaults", "[engine_behavior]") {
  // tensorrt_llm/llmapi/llm_args.py and trtllm-serve (engine_behavior.cpp trtllm_behavior names each).
  const EngineBehavior t = trtllm_behavior();
  CHECK(t.engine == "trtllm");
  CHECK(t.memory_rule == MemoryRule::kFreeFraction);  // KvCacheConfig.free_gpu_memory_fraction
  CHECK(t.mem_fraction_static == 0.9);                // "Default is 90%"
  CHECK(t.chunked_prefill_size == 8192);              // max_num_tokens
  CHECK(t.max_running_requests == 2048);              // max_batch_size
  CHECK(t.cuda_graph_max_bs == 128);                  // CudaGraphConfig.max_batch_size 0 -> 128
  CHECK(t.admission == Admission::kWholeRequest);     // GUARANTEED_NO_EVICT
  CHECK(t.mixed_steps);                               // inflight batching
  CHECK_FALSE(t.chunk_split_over_dp);
  const ResolvedEngine r = resolve_engine(t, kH200Bytes, 0.5, 8, 8);
  CHECK(r.mem_fraction == 0.9);
  CHECK(r.rank_chunk_tokens == 8192);
  CHECK(parse_memory_rule("free_fraction", "x") == MemoryRule::kFreeFraction);
  // Issue 43: no all-to-all on an 8-GPU node (fused_moe_cutlass.py select_alltoall_method_type): the MoE
  // output is all-reduced with the attention TP, or all-gathered / reduce-scattered under attention DP.
  CHECK(t.moe_comm == MoeComm::kGatherOrAllReduce);
  // Issues 43/44: SGLang's default is no all-to-all under EP (server_args.py moe_a2a_backend = "none", 0.5.x:
  // the StandardDispatcher, layers/moe/token_dispatcher/standard.py); DeepEP's only with
  // --moe-a2a-backend deepep. vLLM: no all-to-all without data parallelism (fused_moe/config.py
  // use_all2all_kernels = dp_size > 1 and use_ep), all-gather / reduce-scatter with it (all2all_backend
  // default allgather_reducescatter).
  CHECK(sglang_behavior().moe_comm == MoeComm::kLocalExperts);
  CHECK(vllm_behavior().moe_comm == MoeComm::kGatherOrAllReduce);
  CHECK(seed_behavior().moe_comm == MoeComm::kAllToAll);  // the seed article's DeepEP dispatch and combine
  CHECK(parse_moe_comm("allgather", "x") == MoeComm::kGatherOrAllReduce);
  CHECK(parse_moe_comm("local", "x") == MoeComm::kLocalExperts);
  CHECK(parse_moe_comm(to_string(MoeComm::kAllToAllUnderDp), "x") == MoeComm::kAllToAllUnderDp);
  CHECK(parse_moe_comm(to_string(MoeComm::kAllToAll), "x") == MoeComm::kAllToAll);
  CHECK_THROWS_WITH(parse_moe_comm("deepep", "engine: moe_comm"), Catch::Contains("alltoall | allgather"));
  // Issue 43: the context holds (engine/core/context_hold.h), off by default. llm_args.py
  // batch_wait_timeout_iters 0 and batch_wait_max_tokens_ratio 0; attention_dp_config None, whose
  // AttentionDpConfig defaults are timeout_iters 50 and batching_wait_iters 10.
  CHECK(t.batch_wait_timeout_iters == 0);
  CHECK(t.batch_wait_max_tokens_ratio == 0);
  CHECK_FALSE(t.attention_dp_balance);
  CHECK(t.attention_dp_timeout_iters == 50);
  CHECK(t.attention_dp_batching_wait_iters == 10);
  CHECK_FALSE(sglang_behavior().attention_dp_balance);
  CHECK(vllm_behavior().batch_wait_timeout_iters == 0);
  // Attention-DP request assignment: TensorRT-LLM's heap on active tokens (executor_request_queue.py
  // _balance_requests_across_ranks) as least-load; SGLang's load_balance_method round_robin.
  CHECK(t.dp_assign == PlacementPolicy::kLeastLoad);
  CHECK(sglang_behavior().dp_assign == PlacementPolicy::kRoundRobin);
  CHECK(vllm_behavior().dp_assign == PlacementPolicy::kRoundRobin);
}

TEST_CASE("real engines see the driver's device memory, the seed the datasheet's", "[engine_behavior]") {
  Hardware b200;
  b200.hbm_bytes = 1.8e11;   // the datasheet's 180 GB
  b200.device_mib = 183359;  // nvidia-smi
  b200.usable_hbm_fraction = 0.9;
  CHECK(engine_device_bytes(seed_behavior(), b200) == 1.8e11);
  CHECK(engine_device_bytes(sglang_behavior(), b200) == 183359 * kMib);
  CHECK(engine_device_bytes(vllm_behavior(), b200) == 183359 * kMib);
  CHECK(engine_device_bytes(trtllm_behavior(), b200) == 183359 * kMib);
  EngineBehavior pinned = sglang_behavior();
  pinned.device_memory_bytes = 1e11;  // an engine block's own figure wins
  CHECK(engine_device_bytes(pinned, b200) == 1e11);
  // SGLang's memory band reads the driver's MiB: B200 (179 GiB) takes the >= 160 GiB band's 16,384 chunk.
  CHECK(resolve_engine(sglang_behavior(), b200, 8, 1).chunk_tokens == 16384);
  b200.device_mib = 0;  // a JSON without it: hbm.bytes
  CHECK(engine_device_bytes(sglang_behavior(), b200) == 1.8e11);
}

TEST_CASE(
    "SGLang's request limit follows the KV pool: clamp(tokens / context x 512, 2048, 4096), <= tokens / 2",
    "[engine_behavior]") {
  CHECK(derived_max_running_requests(592151, 163840) == 2048);
  CHECK(derived_max_running_requests(2000000, 40960) == 4096);
  CHECK(derived_max_running_requests(1000000, 131072) == 3906);
  CHECK(derived_max_running_requests(1000, 4096) == 500);
}

TEST_CASE("Enum names round-trip and bad names name the place", "[engine_behavior]") {
  for (Admission a : {Admission::kWholeRequest, Admission::kIncremental, Admission::kEstimate})
    CHECK(parse_admission(to_string(a), "x") == a);
  for (KvPlacement p : {KvPlacement::kShardedOverTp, KvPlacement::kPerTpRank})
    CHECK(parse_kv_placement(to_string(p), "x") == p);
  for (MemoryRule m : {MemoryRule::kStaticFraction, MemoryRule::kFractionMinusActivations})
    CHECK(parse_memory_rule(to_string(m), "x") == m);
  CHECK_THROWS_WITH(parse_admission("eager", "--admission"), Catch::Contains("--admission") &&
                                                                 Catch::Contains("'eager'") &&
                                                                 Catch::Contains("estimate"));
}
