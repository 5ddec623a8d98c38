#include "cost/engine_behavior.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>

#include "common/input_error.h"
#include "engine/model/model_config.h"

namespace tokenline {
namespace {

// SGLang's GPU-memory bands (server_args.py ServerArgs._handle_gpu_memory_settings, SGLang 0.5.x): the
// chunk and the largest CUDA-graph batch grow with the device, on the argument that bigger GPUs are faster.
struct MemoryBand {
  double below_mib;           // the band holds devices with less memory than this
  int64_t chunk_tokens;       // chunked_prefill_size
  int32_t graph_bs_small_tp;  // cuda_graph_max_bs when tp < kLargeTp
  int32_t graph_bs_large_tp;
};
constexpr int kLargeTp = 4;
constexpr std::array<MemoryBand, 6> kBands = {{
    {20 * 1024, 2048, 8, 8},                                     // T4, 4080
    {35 * 1024, 2048, 24, 80},                                   // A10, 4090, 5090
    {60 * 1024, 4096, 32, 160},                                  // A100 40 GB, L40
    {90 * 1024, 8192, 256, 512},                                 // H100, A100 80 GB
    {160 * 1024, 8192, 256, 512},                                // H20, H200
    {std::numeric_limits<double>::infinity(), 16384, 512, 512},  // B200, MI300
}};

// SGLang's request-pool rule (model_runner.py ModelRunner init_memory_pool / _resolve_max_num_reqs).
constexpr double kReqsPerContextOfTokens = 512;
constexpr int32_t kMinDerivedRequests = 2048;
constexpr int32_t kMaxDerivedRequests = 4096;

template <typename E, size_t N>
E parse_named(std::string_view name, const std::string& where, const std::array<E, N>& values,
              std::string_view (*namer)(E), const char* expected) {
  for (E v : values)
    if (namer(v) == name) return v;
  throw InputError(where, expected, "'" + std::string(name) + "'");
}

}  // namespace

std::string_view to_string(KvPlacement placement) {
  switch (placement) {
    case KvPlacement::kShardedOverTp:
      return "sharded";
    case KvPlacement::kPerTpRank:
      return "per_rank";
  }
  return "?";
}

KvPlacement parse_kv_placement(std::string_view name, const std::string& where) {
  return parse_named(name, where, std::array{KvPlacement::kShardedOverTp, KvPlacement::kPerTpRank}, to_string,
                     "sharded | per_rank");
}

std::string_view to_string(Admission admission) {
  switch (admission) {
    case Admission::kWholeRequest:
      return "whole";
    case Admission::kIncremental:
      return "incremental";
    case Admission::kEstimate:
      return "estimate";
  }
  return "?";
}

Admission parse_admission(std::string_view name, const std::string& where) {
  return parse_named(name, where,
                     std::array{Admission::kWholeRequest, Admission::kIncremental, Admission::kEstimate},
                     to_string, "whole | incremental | estimate");
}

std::string_view to_string(MemoryRule rule) {
  switch (rule) {
    case MemoryRule::kStaticFraction:
      return "static_fraction";
    case MemoryRule::kFractionMinusActivations:
      return "fraction_minus_activations";
    case MemoryRule::kFreeFraction:
      return "free_fraction";
  }
  return "?";
}

MemoryRule parse_memory_rule(std::string_view name, const std::string& where) {
  return parse_named(name, where,
                     std::array{MemoryRule::kStaticFraction, MemoryRule::kFractionMinusActivations,
                                MemoryRule::kFreeFraction},
                     to_string, "static_fraction | fraction_minus_activations | free_fraction");
}

std::string_view to_string(MoeComm comm) {
  switch (comm) {
    case MoeComm::kAllToAll:
      return "alltoall";
    case MoeComm::kGatherOrAllReduce:
      return "allgather";
    case MoeComm::kLocalExperts:
      return "local";
    case MoeComm::kAllToAllUnderDp:
      return "alltoall_dp";
  }
  return "?";
}

MoeComm parse_moe_comm(std::string_view name, const std::string& where) {
  return parse_named(name, where,
                     std::array{MoeComm::kAllToAll, MoeComm::kGatherOrAllReduce, MoeComm::kLocalExperts,
                                MoeComm::kAllToAllUnderDp},
                     to_string, "alltoall | allgather | local | alltoall_dp");
}

// MoE communication under expert parallelism: SGLang's default is no all-to-all (MoeComm::kLocalExperts).
// python/sglang/srt/server_args.py: `moe_a2a_backend: Literal["none", "deepep", ...] = "none"` in every
// version read (0.5.x through main: the Literal grew mooncake, ascend_fuseep, mori, flashinfer; the default
// stayed "none"), so in the releases the SGLang rows of calibrate/ ran (0.5.3rc1 to 0.5.9); "none" gives the
// StandardDispatcher (layers/moe/token_dispatcher/standard.py): each EP rank runs its local experts over the
// tokens it holds, and the layer's all-reduce (or the DP gather / scatter) joins them. The older flags map
// onto it (ServerArgs.__post_init__, deprecated since 0.4.10): --enable-ep-moe sets ep_size = tp_size and
// moves no token; --enable-deepep-moe (default False) sets moe_a2a_backend "deepep". DeepEP's all-to-all
// dispatch and combine (MoeComm::kAllToAll) is opt-in: sim --moe-a2a-backend deepep, or an engine block's
// moe_comm "alltoall".
EngineBehavior sglang_behavior() {
  EngineBehavior b;
  b.moe_comm = MoeComm::kLocalExperts;
  return b;
}

int64_t ratio_state_slots(double cache_bytes, int64_t bytes_per_slot) {
  assert(bytes_per_slot > 0 && "ratio_state_slots: a model with linear layers");
  if (cache_bytes <= 0) return 0;
  const double r = kSglangMambaFullMemoryRatio;
  return int64_t(std::floor(cache_bytes * r / (1 + r) / double(bytes_per_slot)));
}

SglangStateSlots sglang_state_slots(const EngineBehavior& b, double cache_bytes, int64_t bytes_per_slot) {
  assert(bytes_per_slot > 0 && "sglang_state_slots: a model with linear layers");
  SglangStateSlots s;
  s.slots_per_running_request = b.radix_cache ? kSglangMambaSlotsPerRunningRequest : 1;
  // tokenline's max_running_requests is one attention rank's limit already (SGLang's // dp).
  if (!b.radix_cache && b.max_running_requests > 0) {
    s.slots = b.max_running_requests;
    return s;
  }
  s.slots = ratio_state_slots(cache_bytes, bytes_per_slot);
  return s;
}

// vLLM's MoE under expert parallelism (vllm/model_executor/layers/fused_moe/config.py,
// FusedMoEParallelConfig.use_all2all_kernels = dp_size > 1 and use_ep, 0.10 through 0.2x): without data
// parallelism no all-to-all runs - every TP rank holds the step's tokens, each EP rank runs its experts over
// all of them (expert_map) and the output is all-reduced over the TP group (FusedMoE
// maybe_all_reduce_tensor_model_parallel), as under pure TP. With --data-parallel-size > 1 the default
// all2all backend is allgather_reducescatter (vllm/config/parallel.py all2all_backend, the
// VLLM_ALL2ALL_BACKEND default before; AgRsAll2AllManager in device_communicators/all2all.py): each MoE
// layer all-gathers the DP ranks' hidden states and reduce-scatters its output. Both are
// MoeComm::kGatherOrAllReduce's collectives; DeepEP / pplx all-to-all only with --all2all-backend naming
// them.
EngineBehavior vllm_behavior() {
  return EngineBehavior{.engine = "vllm",
                        .version = "0.10",
                        .kv_placement = KvPlacement::kPerTpRank,
                        .memory_rule = MemoryRule::kFractionMinusActivations,
                        .mem_fraction_static = 0.9,  // --gpu-memory-utilization default
                        .reserve = {},
                        .chunked_prefill_size = 8192,
                        .chunk_split_over_dp = false,  // each data-parallel engine has its own budget
                        .cuda_graph_max_bs = 512,      // largest default cudagraph capture size
                        .max_running_requests = 1024,  // max_num_seqs
                        .mixed_steps = true,
                        .admission = Admission::kIncremental,
                        .ratio = {},
                        .window_pool = WindowPoolRule::kSharedPool,
                        .moe_comm = MoeComm::kGatherOrAllReduce};
}

// Sources, TensorRT-LLM 1.x (tensorrt_llm/llmapi/llm_args.py unless named):
//  free_gpu_memory_fraction  KvCacheConfig.free_gpu_memory_fraction, "Default is 90%" of the GPU memory free
//                            once the model is loaded and a maximal forward pass has run (the KV cache is
//                            sized after that profiling pass: docs "Memory Usage of TensorRT-LLM")
//  max_num_tokens 8192       trtllm-serve --max_num_tokens default (BuildConfig.max_num_tokens), one step's
//  tokens max_batch_size 2048       trtllm-serve --max_batch_size default (BuildConfig.max_batch_size)
//  GUARANTEED_NO_EVICT       SchedulerConfig.capacity_scheduler_policy default: a request starts only when
//  the KV
//                            blocks of its prompt and all its output can be reserved; nothing is evicted
//  inflight batching         context and generation requests run in one step (the PyTorch executor's batch)
//  chunked context off       enable_chunked_prefill default False: a prompt runs whole within max_num_tokens
//                            (tokenline chunks a longer one at max_num_tokens, where TRT-LLM would refuse it)
//  CUDA graphs <= 128        CudaGraphConfig.max_batch_size 0 -> 128, batch sizes 1..31, 32, 64, 128,
//                            enable_padding False (a decode batch off that list runs eagerly; tokenline pads
//                            it to its bucket instead)
//  overlap scheduler on      disable_overlap_scheduler default False (the profile's overlap_schedule timing)
//  batching wait off         batch_wait_timeout_iters 0, batch_wait_max_tokens_ratio 0, batch_wait_timeout_ms
//                            0: "If 0, disables timeout-iters-based batching delays" (py_executor.py
//                            enable_batch_waiting = either > 0); modelled in engine/core/context_hold.h
//  attention DP balance off  attention_dp_config default None (no load balancing among DP ranks); set, its
//                            AttentionDpConfig defaults are enable_balance False, timeout_iters 50,
//                            batching_wait_iters 10 (py_executor.py _balance_adp_requests; context_hold.h)
//  MTP off                   speculative_config default None (no draft tokens)
//  MoE communication         allgather / all-reduce, no all-to-all on an 8-GPU HGX node (MoeComm
//                            kGatherOrAllReduce: _torch/modules/fused_moe/fused_moe_cutlass.py
//                            select_alltoall_method_type needs enable_attention_dp and MNNVL or
//                            TRTLLM_CAN_USE_DEEP_EP; without attention DP it is NotEnabled)
EngineBehavior trtllm_behavior() {
  return EngineBehavior{.engine = "trtllm",
                        .version = "1.2",
                        .kv_auto_from_checkpoint = true,  // KvCacheConfig.dtype "auto"
                        .kv_placement = KvPlacement::kPerTpRank,
                        .memory_rule = MemoryRule::kFreeFraction,
                        .mem_fraction_static = 0.9,  // free_gpu_memory_fraction
                        .reserve = {},
                        .chunked_prefill_size = 8192,  // max_num_tokens
                        .chunk_split_over_dp = false,  // each attention-DP rank schedules its own batch
                        .cuda_graph_max_bs = 128,      // CudaGraphConfig.max_batch_size default
                        .max_running_requests = 2048,  // max_batch_size
                        .mixed_steps = true,           // inflight batching
                        .admission = Admission::kWholeRequest,
                        .ratio = {},
                        // Assumed: TensorRT-LLM gives each attention window its own pool, split statically
                        // at start (docs "KV Cache System"); the split rule was not read.
                        .window_pool = WindowPoolRule::kSharedPool,
                        .moe_comm = MoeComm::kGatherOrAllReduce,
                        .batch_wait_timeout_iters = 0,           // batch_wait_timeout_iters
                        .batch_wait_max_tokens_ratio = 0,        // batch_wait_max_tokens_ratio
                        .attention_dp_balance = false,           // attention_dp_config None
                        .attention_dp_timeout_iters = 50,        // AttentionDpConfig.timeout_iters
                        .attention_dp_batching_wait_iters = 10,  // AttentionDpConfig.batching_wait_iters
                        // executor_request_queue.py _balance_requests_across_ranks (1.x): new requests go
                        // to the rank with the fewest active tokens among those below the expected count
                        // (a heap on num_active_tokens): tokenline's least-load (queued + running tokens)
                        .dp_assign = PlacementPolicy::kLeastLoad};
}

EngineBehavior seed_behavior() {
  return EngineBehavior{.engine = "seed",
                        .version = "seed article",
                        .kv_placement = KvPlacement::kShardedOverTp,
                        .memory_rule = MemoryRule::kFractionMinusActivations,
                        .reserve = {},
                        .chunk_split_over_dp = false,
                        .max_running_requests = 1024,
                        .mixed_steps = true,
                        .admission = Admission::kWholeRequest,
                        .ratio = {}};
}

KvLayout run_kv_layout(const EngineBehavior* engine, KvLayout model_default, const std::string& flag,
                       const Hardware& hw, std::string_view checkpoint_kv) {
  if (!flag.empty()) return parse_kv_layout(flag, "--kv-layout");
  if (engine == nullptr) return model_default;
  if (!engine->kv_layout_auto) return engine->kv_layout;
  if (engine->kv_auto_from_checkpoint && checkpoint_kv == "FP8")
    return model_default == KvLayout::kBf16 ? KvLayout::kFp8E4m3 : model_default;
  for (const auto& [gpu, layout] : engine->kv_auto_by_gpu)
    if (gpu == hw.name) return layout;
  return model_default;
}

KvLayout run_kv_layout(const EngineBehavior* engine, const ModelConfig& model, const std::string& flag,
                       const Hardware& hw) {
  return run_kv_layout(engine, model.default_kv_layout, flag, hw, model.weights.kv_cache_quant_algo);
}

TokenRatio TokenRatio::for_dp_attention(int dp_attention) const {
  TokenRatio t = *this;
  if (dp_attention > 1) t.init = std::min(1.0, init * dp_attention_conservativeness);
  return t;
}

ResolvedEngine resolve_engine(const EngineBehavior& b, double hbm_bytes, double hardware_fraction, int tp,
                              int dp_attention) {
  assert(hbm_bytes > 0 && tp >= 1 && dp_attention >= 1);
  ResolvedEngine r;
  r.device_memory_bytes = b.device_memory_bytes > 0 ? b.device_memory_bytes : hbm_bytes;
  r.startup_memory_bytes = std::min(b.startup_memory_bytes, r.device_memory_bytes);
  const double mib = r.device_memory_bytes / kBytesPerMib;
  const MemoryBand& band =
      *std::find_if(kBands.begin(), kBands.end(), [mib](const MemoryBand& x) { return mib < x.below_mib; });
  r.chunk_tokens = b.chunked_prefill_size > 0 ? b.chunked_prefill_size : band.chunk_tokens;
  r.rank_chunk_tokens =
      b.chunk_split_over_dp ? std::max<int64_t>(1, r.chunk_tokens / dp_attention) : r.chunk_tokens;
  r.cuda_graph_max_bs = b.cuda_graph_max_bs > 0 ? b.cuda_graph_max_bs
                        : tp < kLargeTp         ? band.graph_bs_small_tp
                                                : band.graph_bs_large_tp;
  if (b.mem_fraction_static > 0) {
    r.mem_fraction = b.mem_fraction_static;
  } else if (b.memory_rule != MemoryRule::kStaticFraction) {
    r.mem_fraction = hardware_fraction;
  } else {
    const ReservedMemoryRule& x = b.reserve;
    double reserved_mib = x.base_mib +
                          double(std::max(r.chunk_tokens, x.min_chunk_tokens)) * x.per_chunk_token_mib +
                          r.cuda_graph_max_bs * x.per_graph_bs_mib + tp / 8.0 * x.per_tp_eighth_mib;
    if (dp_attention > 1) {
      reserved_mib += double(r.cuda_graph_max_bs) * dp_attention * x.dp_attention_per_graph_bs_mib;
      if (r.cuda_graph_max_bs > x.dp_attention_large_graph_bs)
        reserved_mib += double(r.cuda_graph_max_bs) * dp_attention * x.dp_attention_large_graph_bs_mib;
    }
    if (mib > x.floor_above_mib) reserved_mib = std::max(reserved_mib, x.floor_mib);
    // SGLang rounds the fraction to 3 decimals.
    r.mem_fraction = std::round((mib - reserved_mib) / mib * 1000.0) / 1000.0;
  }
  r.reserved_bytes = (r.device_memory_bytes - r.startup_memory_bytes) * (1 - r.mem_fraction);
  return r;
}

double engine_device_bytes(const EngineBehavior& b, const Hardware& hw) {
  if (b.device_memory_bytes > 0) return b.device_memory_bytes;
  return b.engine == "seed" ? hw.hbm_bytes : hw.device_memory_bytes();
}

ResolvedEngine resolve_engine(const EngineBehavior& b, const Hardware& hw, int tp, int dp_attention) {
  return resolve_engine(b, engine_device_bytes(b, hw), hw.usable_hbm_fraction, tp, dp_attention);
}

int32_t derived_max_running_requests(int64_t kv_tokens, int64_t context_tokens) {
  if (kv_tokens <= 0 || context_tokens <= 0) return 1;
  const double estimated = double(kv_tokens) / double(context_tokens) * kReqsPerContextOfTokens;
  const int64_t clamped = std::clamp<int64_t>(int64_t(estimated), kMinDerivedRequests, kMaxDerivedRequests);
  return int32_t(std::max<int64_t>(1, std::min(clamped, kv_tokens / 2)));
}

}  // namespace tokenline
