// EngineBehavior: what a serving engine does with memory and admission beyond its kernels (KV placement
// under TP, the memory fraction it takes and what it keeps back, chunk size, step mixing, admission and
// retraction), with the defaults of SGLang on H200 and the source of each. Plain data; the "engine"
// object of a profile.json parses into it (engine_behavior_json.h) and CLI flags override it field by
// field. resolve_engine() turns the "derive it" zeros into numbers for one device and parallel layout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/placement.h"
#include "engine/model/kv_layout.h"
#include "topologies/hardware.h"

namespace tokenline {

// The engine blocks give memory in MiB, as SGLang's server_args reasons about it.
inline constexpr double kBytesPerMib = 1024.0 * 1024.0;

// Where one request's KV lives under attention TP.
enum class KvPlacement {
  kShardedOverTp,  // the seed's assumption: every token's KV split over the tp GPUs ("KV 也被切分到 8
                   // 张卡上")
  kPerTpRank,      // real engines: MLA latent KV replicated on every TP rank; GQA split by KV heads, each
                   // GPU holding max(1, kv_heads / tp) heads (replicated when kv_heads < tp)
};
std::string_view to_string(KvPlacement placement);
KvPlacement parse_kv_placement(std::string_view name, const std::string& where);  // "sharded" | "per_rank"

// How the engine decides that a waiting request may start.
enum class Admission {
  kWholeRequest,  // all pages of prompt + output at admission (the seed's engine; no preemption needed)
  kIncremental,   // vLLM V1: pages as tokens are written; a step short of pages preempts (recompute)
  kEstimate,      // SGLang: admit while prompt + new_token_ratio x remaining output fits, retract decodes
};
std::string_view to_string(Admission admission);
Admission parse_admission(std::string_view name,
                          const std::string& where);  // "whole" | "incremental" | "estimate"

// Where the engine's memory rule puts what it keeps back for activations and CUDA graphs.
enum class MemoryRule {
  kStaticFraction,            // SGLang: weights + KV = mem_fraction_static x device; the rest is the reserve
  kFractionMinusActivations,  // vLLM / the seed: weights + KV + activation peak = fraction x device
  kFreeFraction,  // TensorRT-LLM: KV = fraction x what is free after start-up, weights and the activation
                  // peak
};
std::string_view to_string(MemoryRule rule);
MemoryRule parse_memory_rule(std::string_view name, const std::string& where);

// How the engine sizes the KV of window layers (sliding-window, chunked) beside the full layers'
// (docs/layers.md).
enum class WindowPoolRule {
  // SGLang: two pools, window tokens = swa_full_tokens_ratio x full tokens, splitting the KV bytes
  // (model_runner.py, hybrid SWA: full = total / (ratio x swa_layers + full_layers); server_args.py
  // swa_full_tokens_ratio default 0.8).
  kRatio,
  // vLLM V1: one block pool shared by the KV cache groups (v1/core/kv_cache_manager.py, block_pool.py); a
  // sliding-window group frees blocks that fall out of the window (single_type_kv_cache_manager.py
  // SlidingWindowManager.remove_skipped_blocks). Modelled as the window group's most (max running requests x
  // (ceil(W / page) + 1) pages) set apart and the rest for the full group.
  kSharedPool,
};

// SGLang's new_token_ratio scheme (python/sglang/srt/environ.py, SGLang 0.5.x; read in scheduler.py
// Scheduler.init_schedule_policy / update_running_batch and schedule_batch.py retract_decode).
struct TokenRatio {
  double init = 0.7;                   // SGLANG_INIT_NEW_TOKEN_RATIO x schedule_conservativeness (1.0)
  double min_factor = 0.14;            // SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR: floor = init x 0.14 = 0.098
  int32_t decay_steps = 600;           // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS: init -> floor over 600 decodes
  int32_t retract_decode_steps = 20;   // SGLANG_RETRACT_DECODE_STEPS: a retraction leaves 20 tokens of
                                       // room per remaining request, and the ratio restarts from there
  int64_t clip_max_new_tokens = 4096;  // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION: output counted at most
  // server_args.py: --enable-dp-attention multiplies schedule_conservativeness by 0.3, so init (and the floor
  // and decay derived from it) by 0.3.
  double dp_attention_conservativeness = 0.3;
  double min_ratio() const { return init * min_factor; }
  double decay_per_step() const { return decay_steps > 0 ? (init - min_ratio()) / decay_steps : 0; }
  // The scheme a rank of a layout with dp_attention ranks runs (dp_attention > 1: DP attention is on).
  TokenRatio for_dp_attention(int dp_attention) const;
};

// SGLang's estimate of what mem_fraction_static must keep back (server_args.py,
// ServerArgs._handle_gpu_memory_settings, SGLang 0.5.x): reserved MiB = base + activations + CUDA graphs
// + a parallel-size term, at least floor_mib on GPUs above floor_above_mib; fraction = 1 - reserved / total.
struct ReservedMemoryRule {
  double base_mib = 512;             // "constant meta data (e.g. from attention backend)"
  double per_chunk_token_mib = 1.5;  // activations: max(chunked_prefill_size, 2048) x 1.5
  int64_t min_chunk_tokens = 2048;
  double per_graph_bs_mib = 2;                   // CUDA graphs: cuda_graph_max_bs x 2
  double per_tp_eighth_mib = 1024;               // "large parallel size": tp x pp / 8 x 1024
  double dp_attention_per_graph_bs_mib = 3;      // DP attention padding: cuda_graph_max_bs x dp x 3
  double dp_attention_large_graph_bs_mib = 1.5;  // and x 1.5 more when cuda_graph_max_bs > 300
  int32_t dp_attention_large_graph_bs = 300;
  double floor_mib = 10240;  // GPUs above 60 GiB keep at least 10 GiB back
  double floor_above_mib = 60 * 1024;
};

// How the engine moves tokens between attention and the routed experts.
enum class MoeComm {
  // DeepEP's (SGLang --moe-a2a-backend deepep; the seed article's layout): under EP each token goes to its
  // experts' ranks by all-to-all (dispatch FP8, combine BF16; Op::kDispatch / Op::kCombine). vLLM's DeepEP
  // backends are kAllToAllUnderDp: they dispatch only under data parallelism, and without this layout's
  // per-layer DP gather and scatter.
  kAllToAll,
  // vLLM's (its all2all_backend default allgather_reducescatter, and no all-to-all at all without data
  // parallelism: engine_behavior.cpp vllm_behavior gives the sources; under DP x TP its dense layers'
  // all-reduce is not priced) and TensorRT-LLM's PyTorch flow (1.x, without an MNNVL / DeepEP all-to-all: any
  // HGX node of 8 GPUs without
  // TRTLLM_CAN_USE_DEEP_EP). Without attention DP every rank holds the same tokens (attention TP), each EP
  // rank runs its experts over all of them, and the MoE output joins the attention's per-layer all-reduce:
  // no all-to-all (fused_moe_cutlass.py / fused_moe_wide_ep.py reducescatter_or_allreduce; the decoder
  // layer all-reduces the MoE plus shared-expert sum, modeling_deepseekv3.py). With enable_attention_dp each
  // MoE layer all-gathers every rank's hidden states (BF16 for FP8 block-scale experts, which quantize
  // inside the kernel) and reduce-scatters the output (forward_chunk: allgather / reducescatter when
  // select_alltoall_method_type says NotEnabled: it needs MNNVL or TRTLLM_CAN_USE_DEEP_EP); the embedding,
  // dense MLP, shared experts and LM head run unsharded on each rank (no collective).
  kGatherOrAllReduce,
  // SGLang without an all-to-all backend (--moe-a2a-backend none, its default in server_args.py; the
  // StandardDispatcher, layers/moe/token_dispatcher/standard.py): under EP each rank maps the top-k to its
  // local experts and runs them over the tokens it already holds, no token moves. Under attention TP the
  // collectives are kAllToAll's (the layer's all-reduce) without the dispatch and combine; under attention DP
  // every layer's MLP gathers all ranks' hidden states and scatters its output (step_cost.cpp,
  // sglang_dp_gather_collectives, gives the sources: all-gather + reduce-scatter or two all-reduces).
  kLocalExperts,
  // vLLM with an all-to-all backend (--all2all-backend deepep_high_throughput | deepep_low_latency | pplx |
  // mori | nixl_ep | flashinfer_*; vllm/config/parallel.py All2AllBackend): it runs only under data
  // parallelism (fused_moe/config.py use_all2all_kernels = dp_size > 1 and use_ep), where each MoE layer
  // dispatches the DP rank's tokens to their experts' ranks and combines them back (Op::kDispatch /
  // Op::kCombine) and attention and dense layers keep the rank's own tokens: no per-layer DP gather or
  // scatter, unlike kAllToAll's layout. Without data parallelism, kGatherOrAllReduce's TP collectives.
  kAllToAllUnderDp,
};
std::string_view to_string(MoeComm comm);
// "alltoall" | "allgather" | "local" | "alltoall_dp"
MoeComm parse_moe_comm(std::string_view name, const std::string& where);

struct EngineBehavior {
  std::string engine = "sglang";
  std::string version = "0.5.9";  // the SGLang release the e2e calibration points were measured with
  // KV cache. SGLang --kv-cache-dtype "auto" = the model's dtype (BF16 latent for DeepSeek-V3 on H200);
  // h200-sglang's profile says what auto is on its device (run_kv_layout applies it).
  bool kv_layout_auto = true;  // true: the model's default layout; false: kv_layout
  KvLayout kv_layout = KvLayout::kBf16;
  // What auto is on the GPUs named here (hardware preset names), where the engine's auto depends on the GPU:
  // SGLang's is BF16 on SM90 (H100, H200) for every model tokenline reads and the model's default layout on
  // SM100 (the profiles' kv_cache_dtype.auto_by_gpu gives the source). Read with the GPU the run is on, so a
  // profile transferred to another GPU takes that GPU's default (issue 43). Empty: the model's layout.
  std::vector<std::pair<std::string, KvLayout>> kv_auto_by_gpu = {};
  // Whether auto follows the checkpoint's own KV format (ModelOpt's kv_cache_quant_algo, WeightFormats::
  // kv_cache_quant_algo): TensorRT-LLM's KvCacheConfig.dtype "auto" keeps the checkpoint's
  // quant_config.kv_cache_quant_algo (tensorrt_llm/llmapi/llm_args.py,
  // sync_quant_config_with_kv_cache_config_dtype; NVIDIA/TensorRT-LLM#16240 documents it), so an FP8-KV
  // checkpoint stores FP8. SGLang's and vLLM's auto is the model's dtype (their --kv-cache-dtype help),
  // false.
  bool kv_auto_from_checkpoint = false;
  KvPlacement kv_placement =
      KvPlacement::kPerTpRank;  // memory_pool.py MLATokenToKVPool: whole latent per rank
  // Memory. device_memory_bytes 0: the hardware JSON's hbm.bytes. mem_fraction_static 0: derived (SGLang:
  // from `reserve`; kFractionMinusActivations: the hardware JSON's usable_fraction).
  MemoryRule memory_rule = MemoryRule::kStaticFraction;
  double device_memory_bytes = 0;
  // What the engine's process holds before it sizes its pools (CUDA context, communicator buffers). SGLang
  // sizes from the memory free after start-up ((device - startup) x fraction); vLLM's utilization is of the
  // device total and start-up memory comes out of it.
  double startup_memory_bytes = 0;
  double mem_fraction_static = 0;
  ReservedMemoryRule reserve;
  // Scheduling. 0 = derived as SGLang does (resolve_engine / derived_max_running_requests).
  int64_t chunked_prefill_size = 0;  // H200 (60-160 GiB band): 8192
  // With DP attention the chunk is the instance's and each rank's scheduler takes chunk / dp (server_args.py
  // _handle_data_parallelism, "to avoid MoE kernel issues"). false: every rank takes the whole chunk.
  bool chunk_split_over_dp = true;
  int32_t cuda_graph_max_bs = 0;  // H200: 256 below tp4, else 512
  int32_t max_running_requests =
      0;                     // model_runner.py: clamp(KV tokens / context x 512, 2048, 4096), <= tokens / 2
  bool mixed_steps = false;  // --enable-mixed-chunk is off: a prefill batch runs alone, decodes wait
  // Plan step n+1 when step n starts (scheduler.py event_loop_overlap): a request that arrives while step n
  // runs is first scheduled in step n+2. Off by default: the profile's engine block says why.
  bool plan_ahead = false;
  Admission admission = Admission::kEstimate;
  TokenRatio ratio;
  WindowPoolRule window_pool = WindowPoolRule::kRatio;  // SGLang's two pools
  double swa_full_tokens_ratio = 0.8;                   // server_args.py default (SGLang 0.5.x)
  // All-to-all dispatch and combine under EP: vLLM's here; sglang_behavior() sets SGLang's own default,
  // kLocalExperts (--moe-a2a-backend none; engine_behavior.cpp gives the source).
  MoeComm moe_comm = MoeComm::kAllToAll;
  // TensorRT-LLM's context holds (engine/core/context_hold.h has the rule and its source); off for SGLang
  // and vLLM. Batch waiting, attention TP only: llm_args.py batch_wait_timeout_iters /
  // batch_wait_max_tokens_ratio (default 0 / 0: off).
  int32_t batch_wait_timeout_iters = 0;
  double batch_wait_max_tokens_ratio = 0;
  // Attention-DP balancing, enable_attention_dp only: llm_args.py AttentionDpConfig (attention_dp_config
  // default None: off; its fields' defaults enable_balance False, timeout_iters 50, batching_wait_iters 10).
  bool attention_dp_balance = false;
  int32_t attention_dp_timeout_iters = 50;
  int32_t attention_dp_batching_wait_iters = 10;
  // Which attention-DP rank an arriving request joins (the sim's --dp-assign overrides it). SGLang:
  // load_balance_method default round_robin (server_args.py); TensorRT-LLM: engine_behavior.cpp.
  PlacementPolicy dp_assign = PlacementPolicy::kRoundRobin;
  // The engine's radix (prefix) cache: on unless --disable-radix-cache (sim --no-prefix-cache). SGLang sizes
  // a linear-attention model's state pool by it (sglang_state_slots).
  bool radix_cache = true;
};

// SGLang's state pool (MambaPool) of a linear-attention model on one attention rank, and how many of its
// slots each running request is counted for. Sources (SGLang 0.5.x, python/sglang/srt/model_executor/
// model_runner_kv_cache_mixin.py, read as stored at commit 001ccef; the v0.5.9 tag itself not read):
//  - handle_max_mamba_cache: --max-mamba-cache-size when given (not a tokenline flag); else, with
//    --disable-radix-cache and --max-running-requests given, max_running_requests // dp slots; else
//    mamba_full_memory_ratio (0.9) / (1 + 0.9) of the memory left for caches, in slots of
//    mamba_cache_per_req bytes. The KV pool gets what the slots leave.
//  - init_memory / calculate_mamba_ratio: the request limit is min(max_running_requests, slots // ratio),
//    ratio 1 without the radix cache and MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3 with it (the
//    MambaRadixCache keeps cached states in the same pool; its extra_buffer strategy, not the default, adds
//    2 more). sgl-project/sglang#19169 (2026-02-23) keeps ratio 1 for no_buffer without the radix cache.
// Speculative decoding's intermediate states (handle_max_mamba_cache reserves max_running x draft tokens
// slots' bytes) are not counted.
// server_args.py mamba_full_memory_ratio default; model_runner_kv_cache_mixin.py
// MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO.
inline constexpr double kSglangMambaFullMemoryRatio = 0.9;
inline constexpr int32_t kSglangMambaSlotsPerRunningRequest = 3;
struct SglangStateSlots {
  int64_t slots = 0;                      // per attention rank
  int32_t slots_per_running_request = 1;  // 1, or 3 with the radix cache
};
// The ratio rule alone: mamba_full_memory_ratio / (1 + ratio) of cache_bytes, in whole slots of
// bytes_per_slot (0 when cache_bytes <= 0). SGLang's default; tokenline sizes every other engine's state
// slots by it too (memory.h). REQUIRES: bytes_per_slot > 0.
int64_t ratio_state_slots(double cache_bytes, int64_t bytes_per_slot);
// REQUIRES: bytes_per_slot > 0. cache_bytes: one GPU's memory left for KV and state after the weights.
SglangStateSlots sglang_state_slots(const EngineBehavior& b, double cache_bytes, int64_t bytes_per_slot);

// SGLang 0.5.x on H200, every field as documented above but moe_comm (kLocalExperts: SGLang's default).
EngineBehavior sglang_behavior();
// vLLM V1 on H200 (EngineArgs.get_batch_defaults, vllm/engine/arg_utils.py: >= 70 GiB and not A100 ->
// max_num_batched_tokens 8192 and max_num_seqs 1024 for the API server; gpu_memory_utilization 0.9;
// chunked prefill mixing decodes and prefill; recompute preemption). What is assumed: activations come out
// of the 0.9 (the seed's activation estimate), CUDA graphs from the 10% left, MLA latent per rank.
EngineBehavior vllm_behavior();
// TensorRT-LLM's PyTorch flow (trtllm-serve, LLM API 1.x; engine_behavior.cpp gives each default's source):
// KV = free_gpu_memory_fraction 0.9 of the memory free after weights and the activation peak, inflight
// batching with prefill and decode in one step, max_num_tokens 8192 per step, max_batch_size 2048,
// GUARANTEED_NO_EVICT capacity scheduling (a request's whole KV is reserved when it starts), CUDA graphs up
// to 128 requests.
EngineBehavior trtllm_behavior();
// The seed article's engine: KV sharded over TP, whole-request reservation, mixed steps, the hardware
// JSON's usable fraction minus the activation estimate. `ledger` and --ideal keep this.
EngineBehavior seed_behavior();

// The KV layout a run on `hw` stores: `flag` (--kv-layout) when given, else the engine's kv_cache_dtype, else
// (the engine says auto) the checkpoint's KV format where the engine's auto follows it
// (kv_auto_from_checkpoint: `checkpoint_kv` "FP8" stores FP8 - fp8_e4m3, or the model's default where that is
// already an FP8 layout; another or no format, as if none), else what auto is on hw (kv_auto_by_gpu), else
// (auto elsewhere, or there is no engine: nullptr) the model's default layout.
KvLayout run_kv_layout(const EngineBehavior* engine, KvLayout model_default, const std::string& flag,
                       const Hardware& hw, std::string_view checkpoint_kv = {});
// The same for `model`: its default layout and its checkpoint's KV format (weights.kv_cache_quant_algo).
KvLayout run_kv_layout(const EngineBehavior* engine, const ModelConfig& model, const std::string& flag,
                       const Hardware& hw);

// An EngineBehavior's derived numbers for one device and layout.
struct ResolvedEngine {
  double device_memory_bytes = 0;
  double startup_memory_bytes = 0;
  double mem_fraction = 0;
  // kStaticFraction: (device - startup) x (1 - fraction), what activations + graphs get
  double reserved_bytes = 0;
  int64_t chunk_tokens = 0;       // the engine's chunked_prefill_size (what its memory rule reads)
  int64_t rank_chunk_tokens = 0;  // one attention rank's step budget: chunk_tokens, split over DP ranks
  int32_t cuda_graph_max_bs = 0;
};

// REQUIRES: hbm_bytes > 0, tp >= 1, dp_attention >= 1. hardware_fraction: the hardware JSON's
// usable_fraction.
ResolvedEngine resolve_engine(const EngineBehavior& b, double hbm_bytes, double hardware_fraction, int tp,
                              int dp_attention);
// The device memory engine b sees on hw: a real engine (SGLang, vLLM, TensorRT-LLM) the driver's total
// (hw.device_memory_bytes()); the seed's engine the datasheet figure the seed article uses (hw.hbm_bytes), so
// `ledger` and --ideal keep their figures. An engine block's device_memory_bytes overrides both.
double engine_device_bytes(const EngineBehavior& b, const Hardware& hw);
// resolve_engine on hw's device memory as engine b sees it (engine_device_bytes).
ResolvedEngine resolve_engine(const EngineBehavior& b, const Hardware& hw, int tp, int dp_attention);

// SGLang's default request limit for a pool of kv_tokens tokens and a model context of context_tokens.
int32_t derived_max_running_requests(int64_t kv_tokens, int64_t context_tokens);

}  // namespace tokenline
