// OpProfile: one engine's measured per-op latencies on one GPU type (topologies/profiles/<name>/, format in
// topologies/profiles/README.md) plus the few timing parameters no kernel table measures. Loaded once at
// the edge (CLI, sim job) and shared read-only by every CostModel built from it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cost/engine_behavior.h"

namespace tokenline {

struct ModelConfig;

// The table kinds a profile may hold; each is optional (an absent table leaves its ops on the roofline).
enum class ProfileTableKind : uint8_t {
  kGemm,             // dtype,m,n,k,latency_ms
  kMoe,              // dtype,routing,tokens,hidden,inter,topk,experts,moe_tp,moe_ep,latency_ms
  kMlaBmm,           // op,dtype,tokens,heads,latency_ms (op: pre = W_UK absorption, post = W_UV)
  kMlaDecode,        // kv_dtype,heads,batch,tokens,latency_ms (tokens: context length in the cache)
  kMlaPrefill,       // kv_dtype,heads,batch,tokens,latency_ms (tokens: new tokens of each sequence)
  kGqaDecode,        // kv_dtype,heads,kv_heads,head_dim,batch,tokens,latency_ms
  kGqaPrefill,       // kv_dtype,heads,kv_heads,head_dim,batch,tokens,latency_ms
  kComm,             // op,gpus,bytes,latency_ms
  kMlaModuleDecode,  // kv_dtype,hidden,q_lora,heads,batch,tokens,latency_ms: the whole MLA block, decode
  kDsa,              // module,phase,hidden,heads,batch,tokens,latency_ms: DSA parts (attn, logits, topk) by
                     // decode/prefill
  kOps,              // op,phase,batch,tokens,latency_ms: one ledger op's whole step on one rank, measured by
                     // `tokenline profile` on the engine's own kernels (op_profile_own.cpp)
  kGdn,  // kernel,phase,k_heads,k_dim,v_heads,v_dim,conv,batch,tokens,latency_ms: Gated DeltaNet conv1d and
         // scan kernels (kernel conv / scan) by decode / prefill at one GPU's heads (tokens: new tokens of
         // each sequence, 1 in decode)
  // module,phase,hidden,heads,prefix,batch,tokens,latency_ms: DeepSeek-V4's whole attention module of one
  // layer (module csa / hca; prefill by cached prefix, sequences, new tokens each; decode by sequences, KV
  // length) at one GPU's heads, and its hyper-connection mixes (mhc_pre / mhc_post, phase any, heads =
  // hc_mult, batch 1, by tokens)
  kDsv4,
  // kernel,phase,heads,head_dim,conv,batch,tokens,latency_ms: Kimi Delta Attention's kernels at one GPU's
  // heads (kernel conv / scan, or fused: conv, recurrence and gated norm in one decode kernel; tokens as
  // kGdn's)
  kKda,
  // module,phase,hidden,heads,prefix,batch,tokens,latency_ms: MiniMax-M3's whole block-sparse attention block
  // of one layer (module msa_bf16 / msa_fp8 by KV dtype; prefill by cached prefix, sequences, new tokens
  // each; decode by sequences, KV length) at one GPU's heads
  kMsa,
  kCount,
};
inline constexpr int kProfileTableKinds = static_cast<int>(ProfileTableKind::kCount);

std::string_view profile_table_key(ProfileTableKind kind);  // the "tables" key in profile.json: "gemm", ...

// One loaded table: `text_columns` leading text columns then numeric ones, the last one latency_ms.
struct ProfileTable {
  std::string file;               // what messages name: "<profile>/gemm.csv"
  int text_columns = 0;           // leading text columns per row
  int numeric_columns = 0;        // the rest, latency_ms last
  std::vector<std::string> text;  // rows x text_columns
  std::vector<double> numbers;    // rows x numeric_columns
  size_t rows() const { return numeric_columns > 0 ? numbers.size() / size_t(numeric_columns) : 0; }
  std::string_view text_at(size_t row, int col) const {
    return text[row * size_t(text_columns) + size_t(col)];
  }
  double at(size_t row, int col) const { return numbers[row * size_t(numeric_columns) + size_t(col)]; }
  bool empty() const { return rows() == 0; }
};

// The timing parameters of a profile. Names, units, defaults and sources: topologies/profiles/README.md.
enum class TimingParam : uint8_t {
  kStepCpuOverheadS,     // scheduler + batch preparation CPU time per step (s)
  kOverlapSchedule,      // 1: CPU work of step n+1 overlaps GPU work of step n (SGLang's overlap scheduler)
  kCudaGraphMaxBs,       // largest decode batch replayed from a CUDA graph; larger batches run eagerly
  kEagerLaunchGapS,      // CPU time to launch one kernel when not graph-captured (s)
  kMoeRoutingAlpha,      // which moe rows price the fused MoE: 0 balanced routing, a > 0 power-law routing of
                         // alpha a
  kOpTimeScale,          // own profiles (ops table): a measured run's op times over the profile's (fitted)
  kStepCpuPerRequestS,   // scheduler CPU time per request in a step (output processing, streaming) (s)
  kRequestLatencyS,      // a request's path outside the steps: send to scheduler + first token back (s)
  kSharedExpertsFusion,  // 1: a DeepSeek-V3-shaped shared expert runs inside the fused MoE kernel as one
                         // more always-chosen expert (SGLang's default) instead of its own GEMMs
  kStepFloorPerLayerS,   // the shortest a step's GPU time runs per decoder layer (s)
  kSpeedProbeS,          // own profiles: the machine's speed probe (speed_probe_s) when its times were
                         // measured (s); 0: not recorded
  kSpeedScale,           // own profiles: every measured time x this (a machine running slower or faster than
                         // when profiled: a run's speed probe over the profile's); 1: as profiled
  kFirstTokenLatencyS,   // the client gets a request's first token this long after its step, the request
                         // decoding meanwhile (the serving path's first response) (s)
  kMoeW4a16Marlin,  // 1: MXFP4 routed experts run Marlin's W4A16 fused MoE (vLLM VLLM_MXFP4_USE_MARLIN=1),
                    // priced from the int4_wo (Marlin) moe rows instead of the w4a16_mxfp4 ones
  // Disaggregated runs only (--pd; docs/pd-moe-mtp.md "The disaggregated path's own costs"):
  kPdFirstTokenLatencyS,  // a disaggregated request's first token reaches the client this much later again
                          // (front end, request plane, bootstrap, transfer polling of Dynamo + SGLang PD) (s)
  kPdHandoffPerTokenS,    // time a hand-off occupies its prefill rank's KV sender per prompt token before the
                          // KV leaves (transfer descriptors posted per token and layer, page size 1) (s)
  // Steps without overlap scheduling only (overlap_schedule 0; vLLM V1 without --async-scheduling): the
  // step's serial CPU time, which adds to the GPU's, in place of step_cpu_overhead_s /
  // step_cpu_per_request_s. A profile that names neither keeps those two in the serial step
  // (op_profile_resolve.cpp).
  kSyncStepCpuS,            // serial CPU time per step: the GPU idles from one step's sampled-token sync to
                            // the next step's first launch (s)
  kSyncStepCpuPerRequestS,  // that serial time per request in the step (s)
  kDsaTrtllmBackend,    // 1: a DSA model's attention block runs SGLang's TensorRT-LLM NSA backend in prefill
                        // and decode (--nsa-prefill-backend trtllm --nsa-decode-backend trtllm), priced from
                        // the dsa table's whole-block rows measured under it where the profile has them
  kMoeContiguousAlign,  // > 0: the fused MoE runs a contiguous-layout grouped GEMM whose row buffer is sized
                        // for the worst case (M x top-k + local experts x (align - 1) rows, rounded to align)
                        // and whose kernels touch every row (vLLM's DeepGEMM MoE on Hopper, --moe-backend
                        // deep_gemm): the rows beyond the routed ones cost their HBM bytes; 0: none
  kEagerHostPerMlaLayerS,  // a step that holds a context chunk runs outside a CUDA graph and the host
                           // launches each MLA decoder layer's kernels in this long, so it lasts at least its
                           // MLA layers run x this: max(its ops, the host's launches); decode-only steps keep
                           // their ops (s)
  kCount,
};
inline constexpr int kTimingParams = static_cast<int>(TimingParam::kCount);
std::string_view timing_param_name(TimingParam p);  // "step_cpu_overhead_s", ...

struct OpProfile {
  std::string name;         // "h200-sglang"
  std::string hardware;     // the hardware preset it was measured on ("h200")
  std::string engine_name;  // "sglang"
  std::string origin;       // "topologies/profiles/h200-sglang (embedded)" or the directory
  // "measured_on" (own profiles): the model and layout the ops table was measured with; empty: any.
  std::string measured_model, measured_parallel;
  std::array<ProfileTable, kProfileTableKinds> tables;
  std::array<double, kTimingParams> timing{};
  // Which timing parameters profile.json or --profile-set named (the others hold timing_param_default).
  std::array<bool, kTimingParams> timing_given{};
  // timing.op_scales (own profiles, calibrate --trace): per ledger op name, its run time over its profiled
  // time, each > 0; ops not named take op_time_scale.
  std::vector<std::pair<std::string, double>> op_scales;
  // The "engine" object (engine_behavior_json.h): what the engine does with memory and admission. Absent:
  // has_engine false, and a job keeps the seed's engine unless its flags say otherwise.
  bool has_engine = false;
  EngineBehavior engine;
  // A transferred profile (cost/time_source_transfer.h, loaded as "transfer:<profile>"): `hardware`'s tables
  // price another GPU by their efficiency over the roofline on the same shapes, with this engine and these
  // step terms; make_cost_model then accepts any hardware.
  bool transferred = false;
  // SGLang's --moe-runner-backend (issue 43): the runner whose kernel the moe table timed (the engine block's
  // moe_runner_backend value; empty: not said), and the tables of other runners the profile holds (its
  // moe_runner_backend.tables, by runner name). select_moe_runner swaps one in.
  std::string moe_runner;
  std::vector<std::pair<std::string, ProfileTable>> moe_runner_tables;
  // vLLM's MoE backend (issue 44; --moe-backend, vllm/config/kernel.py) or TensorRT-LLM's (issue 43;
  // moe_config.backend): the engine block's moe_backend value (the moe table holds, per weight format, the
  // kernel the engine's default selection runs: vLLM "auto", TensorRT-LLM "CUTLASS") and the tables of other
  // backends (its moe_backend.tables, by backend name), each holding rows of some formats (dtypes) only.
  // select_moe_backend swaps one's rows in, dtype by dtype.
  std::string moe_backend;
  std::vector<std::pair<std::string, ProfileTable>> moe_backend_tables;
  // engine.moe_backend.contiguous_align: backends whose grouped GEMM runs a worst-case padded row buffer, by
  // name, with their per-expert alignment; select_moe_backend sets timing moe_contiguous_align from it.
  std::vector<std::pair<std::string, int64_t>> moe_backend_contiguous_align;
  // engine.moe_backend.formats: the quantized formats (dtypes) whose moe-table rows time one backend's own
  // kernel for that format, with that backend (TensorRT-LLM on B300: its NVFP4 rows are CUTLASS's NVFP4 MoE).
  // Another backend selected without rows of such a format prices it as a format without rows
  // (select_moe_backend); the BF16 rows every format is derived from are not listed.
  std::vector<std::pair<std::string, std::string>> moe_format_backends;
  const ProfileTable& table(ProfileTableKind k) const { return tables[static_cast<size_t>(k)]; }
  double param(TimingParam p) const { return timing[static_cast<size_t>(p)]; }
  bool given(TimingParam p) const { return timing_given[static_cast<size_t>(p)]; }
};

// A profile's engine block, or nullptr (no profile, or one without an engine).
inline const EngineBehavior* profile_engine(const OpProfile* p) {
  return p != nullptr && p->has_engine ? &p->engine : nullptr;
}

// The built-in value of a timing parameter (what a profile that omits it gets).
double timing_param_default(TimingParam p);

// The timing parameter of that profile.json / --profile-set name, if there is one.
std::optional<TimingParam> find_timing_param(std::string_view name);

// Loads a profile by embedded name ("h200-sglang") or from a directory holding profile.json. Throws
// InputError naming the file (and line for CSVs) on a missing table, a bad header, a bad number, an
// unknown timing parameter or an unknown profile name; the "engine" object by engine_behavior_from_json (its
// own messages).
std::shared_ptr<OpProfile> load_op_profile(const std::string& name_or_dir);

// Prices the fused MoE by runner `backend`'s table (sim --moe-runner-backend, SGLang's flag of that name):
// the profile's moe table when it timed that runner, else the profile's table of it (moe_runner_tables),
// which then becomes the moe table. Returns false, the profile unchanged, when the profile holds no table of
// that runner (say so: its moe table still prices the MoE). Throws InputError naming `where` for a name that
// is not one of SGLang's runners (MoeRunnerBackend, layers/moe/utils.py, 0.5.x).
bool select_moe_runner(OpProfile& profile, const std::string& backend, const std::string& where);

// Whether the profile's dsa table holds the whole-block rows of SGLang's TensorRT-LLM NSA backend that price
// `model` when dsa_trtllm_backend is 1 (its hidden size; for a model whose layers share their indexer's
// top-k, the skip rows too): else the parts do.
bool has_dsa_block_rows(const OpProfile& profile, const ModelConfig& model);

// Prices the fused MoE of the formats backend `backend`'s table holds by that table (sim --moe-backend:
// vLLM's flag of that name, or the environment variables that chose a backend in vLLM 0.1x; TensorRT-LLM's
// moe_config.backend): the moe table's rows of each dtype the backend's table has are replaced by its rows;
// other formats keep theirs, but for a format whose rows time another backend's kernel (moe_format_backends):
// its rows leave the table, so it is priced as a format without rows (another format's rows scaled by bytes
// and rate), not by that other kernel. True when `backend` is the profile's moe_backend value (its moe table
// as it is); false, the profile unchanged but for those rows, when the profile holds neither a table of that
// backend nor its engine.moe_backend.contiguous_align (a backend padding each local expert's rows: the moe
// table keeps the routed rows and timing moe_contiguous_align is set to its alignment unless --profile-set
// named it). Throws InputError naming `where` for a name that is not one of the profile's engine's MoE
// backends (vLLM: MoEBackend, vllm/config/kernel.py; TensorRT-LLM: MoeConfig.backend, llmapi/llm_args.py) or
// for a profile of another engine (SGLang's runners: select_moe_runner).
bool select_moe_backend(OpProfile& profile, const std::string& backend, const std::string& where);

// Applies "name=value[,name=value]" overrides (--profile-set); throws InputError naming an unknown
// parameter or a bad value.
void apply_profile_sets(OpProfile& profile, const std::string& sets);

// What the profile's engine does to its overlap scheduler when it speculates (--mtp k > 0). SGLang 0.5.9,
// the release the SGLang profiles model, runs EAGLE / MTP as speculative decoding V1 unless
// SGLANG_ENABLE_SPEC_V2 is set (python/sglang/srt/environ.py: EnvBool(False)), and for V1
// server_args.py _handle_speculative_decoding turns the overlap scheduler off ("Overlap scheduler is
// disabled because of using eagle3 or standalone speculative decoding"): overlap_schedule 0, a step's CPU
// time in series with its GPU time (the profile's sync_step_cpu_* terms). Call it before --profile-set, so
// that overlap_schedule=1 there says spec V2. vLLM and TensorRT-LLM profiles keep their schedule. Returns
// the line a run lists among its defaults, or "" where nothing changed.
std::string apply_speculative_schedule(OpProfile& profile, int32_t mtp_drafts);

// --profile and --profile-set as a command takes them: null without a profile, else the profile with the
// engine's schedule under speculation (apply_speculative_schedule, for mtp_drafts > 0) and then the
// overrides applied. --profile-set without --profile is InputError naming --profile-set.
std::shared_ptr<OpProfile> load_op_profile(const std::string& name_or_dir, const std::string& sets,
                                           int32_t mtp_drafts = 0);

// Prices `profile` at the speed a run's machine had: speed_scale = run_probe_s / the profile's speed_probe_s.
// Throws InputError naming `where` when the profile recorded no probe (profiles of other engines, or made
// before probes were recorded) or run_probe_s is not > 0.
void set_speed_from_run(OpProfile& profile, double run_probe_s, const std::string& where);

// Names of the profiles compiled into the binary, sorted.
std::vector<std::string> embedded_profile_names();

// The engines --engine names: sglang, vllm, trtllm.
std::vector<std::string> engine_names();

// An engine as its project spells it, for messages and reports: "SGLang", "vLLM", "TensorRT-LLM"; another
// name as given.
std::string engine_display_name(const std::string& engine);

// The profile a command prices with when it names an engine (--engine): `profile` as given when `engine` is
// empty; else the embedded profile <hardware>-<engine> (b200-trtllm), and where the hardware has none, the
// engine's profile on the nearest GPU transferred to it ("transfer:b200-trtllm" on gb200;
// time_source_transfer.h). Throws InputError naming --engine for an unknown engine and for --engine beside
// --profile.
std::string profile_for_engine(const std::string& profile, const std::string& engine,
                               const Hardware& hardware);

}  // namespace tokenline
