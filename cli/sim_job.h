// SimJob: the options of `tokenline sim` (and `tokenline quickstart`) exactly as the user gave them, and
// run_sim_job, which validates them into native structs at the edge (InputError naming the option, what
// was expected and what was found), resolves each default the user left (layout from the model and GPUs,
// hardware) and judges the workload before it touches --out (cli/run_summary.h, traces/output_file.h
// RunOutputs), simulates, and prints the summary (stdout) with any overload warning (stderr).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/kv_tier_options.h"
#include "cli/scale_options.h"
#include "cli/trace_options.h"

namespace tokenline {

struct SimJob {
  std::string workload;  // path, "synthetic:..." or "" for the embedded default
  std::string model = "glm-5.3";
  // --weights-format: replaces the checkpoint's quantized format (override_weight_format); "": its own.
  std::string weights_format;
  std::string hardware;                // "": h200, unless --cluster names the hardware
  std::string cluster;                 // when set, its hardware is used and its GPU count bounds the run
  std::string parallel;                // one layout for every instance, or a comma list; "": the model's
  int32_t gpus = 0;                    // GPUs of every instance together; 0: 8 per instance, or the cluster's
  int32_t instances = 1;               // with one layout: how many instances of it
  std::string router = "round-robin";  // across instances
  std::string dp_assign;  // across attention-DP ranks inside an instance; "": the engine's (round-robin)
  double kv_overlap_score_weight = 1.0;  // --router kv-aware: Dynamo's --kv-overlap-score-weight default
  double router_temperature = 0.0;       // --router kv-aware: Dynamo's --router-temperature default
  int64_t chunk_tokens = 0;  // per-step token budget = prefill chunk; 0: the engine's (seed: 32768)
  // caps a step's tokens below the chunk (SGLang --max-prefill-tokens); 0: none
  int64_t max_prefill_tokens = 0;
  int64_t page_tokens = 64;
  // SGLang's whole-request reservation (the seed's engine). Incremental (vLLM) admits more and preempts
  // under pressure; on the Mooncake trace with dp8-ep8 it recomputes so often that the run is ~8x longer.
  std::string
      reservation;  // whole | incremental | estimate (SGLang: admit on an estimate, retract); "": engine's
  // Engine behaviour overrides (cost/engine_behavior.h); unset ("" / 0) keeps the profile's engine,
  // or the seed's without one.
  std::string mixed_steps;    // on | off: a step with prefill work carries no decodes (SGLang)
  std::string plan_ahead;     // on | off: step n+1 planned when step n starts (SGLang's overlap loop)
  std::string kv_replicated;  // on: MLA latent KV on every TP rank, GQA split by KV heads; off: the seed
  double mem_fraction = 0;    // share of HBM for weights + KV; 0: the hardware JSON's
  // SGLang's --swa-full-tokens-ratio: window-pool tokens per full-pool token (window layers, DeepSeek-V4);
  // 0: the engine's (SGLang 0.8)
  double swa_full_tokens_ratio = 0;
  // TensorRT-LLM's context holds (engine/core/context_hold.h); "" keeps the engine's. --batch-wait
  // "ITERS:RATIO" (batch_wait_timeout_iters, batch_wait_max_tokens_ratio) or "off"; --attention-dp-balance
  // "TIMEOUT_ITERS:BATCHING_WAIT_ITERS" (attention_dp_config enable_balance true) or "off".
  std::string batch_wait;
  std::string attention_dp_balance;
  std::string policy = "fcfs";
  int32_t max_running = 0;  // per rank; 0: the engine's (seed: 1024, SGLang: derived from its KV pool)
  // With --pd, the prefill instances' own mem_fraction / max_running (SGLang PD workers set them per
  // worker); 0: the same as the decode instances'.
  double prefill_mem_fraction = 0;
  int32_t prefill_max_running = 0;
  int64_t kv_pages = 0;  // 0: sized from HBM left after weights; else pages per rank
  bool prefix_cache = true;
  KvTierFlags kv_tier;    // the host KV tier (cli/kv_tier_options.h); off unless asked for
  std::string kv_layout;  // "" = the model's default
  bool ideal = false;     // the seed's ideal rates instead of the hardware's efficiencies
  bool roofline = false;  // --roofline: every op from the roofline and the seed's engine, no default profile
  std::string profile;    // op profile name or directory ("": the best available, cli/time_source_choice.h)
  std::string engine;  // sglang | vllm | trtllm: the profile <hardware>-<engine> ("": --profile's, or sglang)
  std::string profile_set;  // its timing overrides "name=value,..."
  // SGLang's --moe-runner-backend: the fused MoE priced by that runner's table of the profile ("": the
  // profile's moe table)
  std::string moe_runner_backend;
  // SGLang's --nsa-prefill-backend / --nsa-decode-backend (a DSA model's attention kernels; "": SGLang's
  // defaults): both trtllm sets the profile's dsa_trtllm_backend (the whole-block rows); any other pair keeps
  // the parts.
  std::string nsa_prefill_backend, nsa_decode_backend;
  // vLLM's --moe-backend (issue 44): the formats that backend's table holds priced by it ("": the profile's
  // moe table, vLLM's default selection per format).
  std::string moe_backend;
  // SGLang's --moe-a2a-backend: none (its StandardDispatcher: no all-to-all under EP) or deepep (all-to-all
  // dispatch and combine); "": the profile's engine block
  std::string moe_a2a_backend;
  // vLLM's --all2all-backend (vllm/config/parallel.py): allgather_reducescatter (its default) or naive gather
  // and scatter under data parallelism, or a dispatching backend (deepep_*, pplx, mori, nixl_ep,
  // flashinfer_*); "": the profile's engine block
  std::string all2all_backend;
  // SGLang's --scheduler-recv-interval (sim/driver/sim_config.h): 1 receives every step
  int32_t scheduler_recv_interval = 1;
  std::string speed_of;  // a run (dir or metrics.json): price an own profile at that run's machine speed
  std::string backend = "analytic";
  std::string overlap = "none";  // simgrid backend: none | combine | tbo | dp-gather
  uint64_t seed = 0;
  std::string slo;  // "ttft=200ms,tpot=50ms"
  std::string out;
  std::string trace_detail = "step";  // none | step | op
  cli::TraceOptions trace;            // --trace-window, --trace-requests, --trace-gzip
  int32_t concurrency = 0;
  int64_t warmup_requests = 0;  // closed loop: the first N are a warm-up phase that drains first
  double time_scale = 1.0;
  double rate = 0;  // --rate: requests per second, the workload's arrivals rescaled (0: its own)
  int64_t isl = 0;  // --isl / --osl: a synthetic workload of these mean input / output lengths
  int64_t osl = 0;
  double range_ratio = 0;  // their lengths uniform in [x (1 - r), x (1 + r)] (vllm bench serve)
  bool json = false;       // --json: the summary as one JSON object on stdout
  // The command and the flags as given, --out left out (metrics.json's configuration.arguments: with
  // --out DIR appended they reproduce the run); the CLI fills it.
  std::vector<std::string> arguments;
  int64_t max_requests = 0;
  double start_s = 0;
  double duration_s = 0;
  bool skip_bad_lines = false;
  bool wall_time_in_metrics = false;
  bool progress = false;
  // PD disaggregation: "" (co-located) or xPyD; the first x instances prefill, the other y decode.
  std::string pd;
  std::string pd_link = "ib400";      // nvlink | ib200 | ib400
  std::string pd_transfer = "whole";  // whole | layer
  // Per-step noise: MoE expert load skew (uniform | zipf:<alpha> | histogram:<file>), EPLB, MTP.
  std::string expert_skew = "uniform";
  int32_t eplb_redundant = -1;  // -1: no EPLB
  int32_t mtp_drafts = 0;
  double mtp_accept_mean = 0.7;
  double mtp_accept_std = 0.0;  // the CLI sets it when stderr is a terminal
  cli::ScaleOptions scale;      // --gpu-price, autoscaling (cli/scale_options.h)
};

// Runs the job. Throws InputError for bad input (exit code 2); returns the process exit code otherwise
// (0 on success, 1 when the simulation or an output write failed, with the reason on stderr).
int run_sim_job(const SimJob& job);

// `tokenline sim --backend replay:<trace.json>`: run_sim_job with every instance's steps replayed from a
// real run's trace. Throws InputError for a bad trace; returns 1 on divergence.
int run_replay_job(const SimJob& job);

}  // namespace tokenline
