// `tokenline sim`: simulate a serving deployment on a workload (docs/architecture.md "Simulation driver",
// "Outputs").
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli/command.h"
#include "cli/sim_job.h"
#include "cli/sim_options.h"
#include "sim/backends/replay_backend.h"

namespace tokenline::cli {
namespace {

void add_deployment_options(CLI::App& cmd, SimJob& job) {
  cmd.add_option(
      "--workload", job.workload,
      "a trace file (Mooncake/tokenline JSONL, Azure CSV; or mooncake:|azure:|tokenline:<path>), "
      "synthetic:<spec>, sessions:<path> | synthetic-sessions:<spec> (multi-turn, "
      "docs/sessions-and-routing.md), default (the embedded Mooncake conversation head: ~14k-token "
      "prompts); omitted: the first 1,000 requests of the Azure 2023 conversation trace (chat, embedded)");
  cmd.add_option("--model", job.model, "model preset or config.json path")->capture_default_str();
  cmd.add_option(
      "--weights-format", job.weights_format,
      "replace the checkpoint's quantized weight format (bf16, fp8, fp8-block128, nvfp4, mxfp4, mxfp8, "
      "int4-g128, ...; docs/weight-formats.md); default: what its quantization_config says");
  cmd.add_option("--hardware", job.hardware, "hardware preset or JSON path (default: h200)");
  cmd.add_option("--cluster", job.cluster,
                 "cluster preset or JSON path (its hardware, so not with --hardware; bounds the GPUs)");
  cmd.add_option("--gpus", job.gpus,
                 "GPUs of all instances together (default: 8 per instance, or the --cluster's; with "
                 "--parallel, must match it)");
  cmd.add_option("--parallel", job.parallel,
                 "instance layout (tp8, dp8-ep8, tp8-ep8, ...) or a comma list, one per instance (default: "
                 "tp<gpus> for a dense model, dp<gpus>-ep<gpus> for an MoE one)");
  cmd.add_option("--instances", job.instances, "instances of that layout")->capture_default_str();
  cmd.add_option("--router", job.router,
                 "across instances: round-robin | least-load | prefix-aware | room | kv-aware (Dynamo's KV "
                 "router cost)")
      ->capture_default_str();
  cmd.add_option("--kv-overlap-score-weight", job.kv_overlap_score_weight,
                 "--router kv-aware: weight of the uncached-prefill term (Dynamo's default)")
      ->capture_default_str();
  cmd.add_option("--router-temperature", job.router_temperature,
                 "--router kv-aware: 0 picks the lowest cost; > 0 a softmax draw (Dynamo's default 0)")
      ->capture_default_str();
  cmd.add_option(
      "--dp-assign", job.dp_assign,
      "across attention-DP ranks: round-robin | least-load | prefix-aware | room (SGLang's PD prefill); "
      "default: the profile engine's (TensorRT-LLM least-load), else round-robin");
  cmd.add_option("--kv-layout", job.kv_layout,
                 "fp8_ds_mla | fp8_e4m3 | nvfp4_ds_mla | bf16 (default: the model's)");
  cmd.add_flag("--ideal", job.ideal, "the seed's ideal rates (no efficiency factors, no kernel launches)");
  cmd.add_option(
      "--profile", job.profile,
      "price ops from a measured op profile (h200-sglang, or a directory) where it covers them "
      "(default: the best available: sglang's shipped profile on --hardware where it measures every "
      "kernel of the model, else the roofline)");
  cmd.add_option(
      "--engine", job.engine,
      "sglang | vllm | trtllm: price with that engine's profile on --hardware (<hardware>-<engine>); "
      "default sglang");
  cmd.add_flag(
      "--roofline", job.roofline,
      "price every op by its roofline with the seed's engine, whatever profile exists (the seed's model)");
  cmd.add_option("--profile-set", job.profile_set,
                 "override profile timing parameters: name=value[,name=value]");
  cmd.add_option(
      "--scheduler-recv-interval", job.scheduler_recv_interval,
      "SGLang's flag: while decoding, the scheduler takes in new requests once per this many decode "
      "steps (a step with prefill: the next step); aggregated runs");
  cmd.add_option(
      "--moe-runner-backend", job.moe_runner_backend,
      "SGLang's MoE runner the deployment launched (e.g. flashinfer_trtllm): the fused MoE priced by "
      "the profile's table of that runner where it holds one");
  cmd.add_option(
      "--nsa-prefill-backend", job.nsa_prefill_backend,
      "SGLang's flag the deployment launched for a DSA model's prefill attention (flashmla_sparse, "
      "flashmla_kv, flashmla_auto, fa3, tilelang, aiter, trtllm; later releases: --dsa-prefill-backend)"
      ": trtllm with --nsa-decode-backend trtllm prices the whole attention block from the profile's "
      "rows of that backend (profile term dsa_trtllm_backend); default SGLang's");
  cmd.add_option("--nsa-decode-backend", job.nsa_decode_backend,
                 "SGLang's flag for a DSA model's decode attention (the names of --nsa-prefill-backend)");
  cmd.add_option(
      "--moe-backend", job.moe_backend,
      "vLLM's or TensorRT-LLM's MoE backend the deployment ran (vLLM: --moe-backend, or the "
      "VLLM_USE_FLASHINFER_MOE_* variables of vLLM 0.1x, e.g. triton; TensorRT-LLM: moe_config.backend, "
      "e.g. DEEPGEMM): the formats the profile's table of that backend holds priced by it");
  cmd.add_option(
      "--moe-a2a-backend", job.moe_a2a_backend,
      "SGLang's flag the deployment launched: none (SGLang's default: under EP each rank runs its experts "
      "over every token and the layer's all-reduce joins them, no all-to-all) or deepep (all-to-all dispatch "
      "and combine); default: the profile's engine block");
  cmd.add_option(
      "--all2all-backend", job.all2all_backend,
      "vLLM's flag the deployment launched: allgather_reducescatter (vLLM's default) or naive (each MoE "
      "layer gathers the DP ranks' tokens and scatters its output), or deepep_high_throughput, "
      "deepep_low_latency, pplx, mori, nixl_ep, flashinfer_* (each MoE layer dispatches the rank's tokens to "
      "their experts and combines them back); either only under data-parallel EP, none without it; default: "
      "the engine block");
  cmd.add_option(
      "--speed-of", job.speed_of,
      "a tokenline run's outputs (or metrics.json): price an own profile (tokenline profile) at the "
      "machine speed that run's probe recorded, its speed_probe_s over the profile's");
  cmd.add_option("--backend", job.backend,
                 "cost backend: analytic (closed form), simgrid (contended network; uses --cluster) or "
                 "replay:<trace.json> (a tokenline run's measured steps)")
      ->capture_default_str();
  cmd.add_option("--overlap", job.overlap, "simgrid: compute/comm overlap none | combine | tbo | dp-gather")
      ->capture_default_str();
}

void add_scheduler_options(CLI::App& cmd, SimJob& job) {
  cmd.add_option(
      "--chunk", job.chunk_tokens,
      "token budget per step of one attention rank = prefill chunk (default: the profile engine's, SGLang's "
      "split over DP-attention ranks; else 32768)");
  cmd.add_option("--max-prefill-tokens", job.max_prefill_tokens,
                 "a step's tokens at most this, below the chunk (SGLang --max-prefill-tokens; 0: the chunk)")
      ->capture_default_str();
  cmd.add_option("--page-size", job.page_tokens, "KV page size in tokens")->capture_default_str();
  cmd.add_option("--reservation", job.reservation,
                 "KV admission: whole (the seed) | incremental (vLLM) | estimate (SGLang: new_token_ratio, "
                 "retraction); default: the profile engine's, else whole");
  cmd.add_option("--mixed-steps", job.mixed_steps,
                 "prefill and decode in one step: on | off (SGLang); default: the profile engine's, else on");
  cmd.add_option(
      "--plan-ahead", job.plan_ahead,
      "plan each step when the previous one starts, so a request arriving during a step waits for "
      "the one after next (SGLang's overlap loop): on | off; default: the profile engine's, else off");
  cmd.add_option("--kv-replicated", job.kv_replicated,
                 "MLA latent KV on every TP rank (real engines): on | off (the seed shards it over TP); "
                 "default: the profile engine's, else off");
  cmd.add_option("--batch-wait", job.batch_wait,
                 "TensorRT-LLM batch waiting (attention TP): ITERS:RATIO = batch_wait_timeout_iters, "
                 "batch_wait_max_tokens_ratio, or off; default: the profile engine's (off)");
  cmd.add_option(
      "--attention-dp-balance", job.attention_dp_balance,
      "TensorRT-LLM attention_dp_config enable_balance: TIMEOUT_ITERS:BATCHING_WAIT_ITERS, or off; "
      "default: the profile engine's (off)");
  cmd.add_option("--mem-fraction", job.mem_fraction,
                 "share of HBM for weights + KV (default: the hardware JSON's usable fraction)");
  cmd.add_option("--swa-full-tokens-ratio", job.swa_full_tokens_ratio,
                 "SGLang's: window-pool tokens per full-pool token for window layers and DeepSeek-V4 "
                 "(default: the engine's, SGLang 0.8; DeepSeek-V4 recipes set 0.1)");
  cmd.add_option("--policy", job.policy, "scheduling policy: fcfs | lpm | priority")->capture_default_str();
  cmd.add_option("--max-running", job.max_running,
                 "running requests per rank (default: the profile engine's, else 1024)");
  cmd.add_option("--prefill-mem-fraction", job.prefill_mem_fraction,
                 "with --pd: the prefill instances' own --mem-fraction (default: the same as decode's)");
  cmd.add_option(
      "--prefill-max-running", job.prefill_max_running,
      "with --pd: the prefill instances' own --max-running per rank (default: the same as decode's)");
  cmd.add_option("--kv-pages", job.kv_pages, "KV pages per rank (default: HBM left after weights)");
  cmd.add_flag("!--no-prefix-cache", job.prefix_cache, "disable the radix prefix cache");
  add_kv_tier_options(cmd, job.kv_tier);
  cmd.add_option("--mtp", job.mtp_drafts, "MTP draft tokens per decode step (0: off)")->capture_default_str();
  cmd.add_option("--mtp-accept", job.mtp_accept_mean, "mean per-draft acceptance in [0, 1]")
      ->capture_default_str();
  cmd.add_option("--mtp-accept-std", job.mtp_accept_std, "its standard deviation across steps (Beta)")
      ->capture_default_str();
  cmd.add_option("--expert-skew", job.expert_skew,
                 "MoE routing skew: uniform | zipf:<alpha> | histogram:<file>")
      ->capture_default_str();
  cmd.add_option("--eplb-redundant", job.eplb_redundant, "EPLB with N redundant experts (-1: no EPLB)")
      ->capture_default_str();
}

void add_pd_options(CLI::App& cmd, SimJob& job) {
  cmd.add_option("--pd", job.pd,
                 "prefill/decode disaggregation xPyD (1P1D, 2P1D, ...): x prefill then y decode instances");
  cmd.add_option("--pd-link", job.pd_link, "KV hand-off link: nvlink | ib200 | ib400")->capture_default_str();
  cmd.add_option("--pd-transfer", job.pd_transfer, "whole (after the last chunk) | layer (streamed)")
      ->capture_default_str();
}

void add_run_options(CLI::App& cmd, SimJob& job) {
  cmd.add_option("--concurrency", job.concurrency,
                 "closed loop: N requests in flight (0: trace times); with a session workload, N clients "
                 "each running one session at a time (0: every session at its start_s)")
      ->capture_default_str();
  cmd.add_option("--warmup", job.warmup_requests,
                 "closed loop: the first N requests are a warm-up phase, left out of metrics.json's latency "
                 "and goodput; the rest are sent once all of it has left, the clients together (aiperf "
                 "--warmup-request-count)")
      ->capture_default_str();
  cmd.add_option("--time-scale", job.time_scale, "multiply arrival times (0.5 = twice the rate)")
      ->capture_default_str();
  cmd.add_option("--rate", job.rate,
                 "requests per second: the workload's arrivals rescaled to this rate (its own rate is "
                 "printed; with --duration, over the requests it keeps; 0: its own), or a Poisson rate with "
                 "--isl/--osl");
  cmd.add_option("--isl", job.isl,
                 "a synthetic workload: mean input tokens per request (with --osl, --rate)");
  cmd.add_option("--osl", job.osl, "a synthetic workload: mean output tokens per request");
  cmd.add_option("--range-ratio", job.range_ratio,
                 "--isl/--osl lengths uniform in [x(1-r), x(1+r)] (vllm bench serve --random-range-ratio; "
                 "0: fixed)");
  cmd.add_option("--max-requests", job.max_requests,
                 "stop after N requests (0: all; an --isl/--osl workload has N, default 1000)");
  cmd.add_option("--start", job.start_s, "keep arrivals from this time on (s, after --time-scale)");
  cmd.add_option("--duration", job.duration_s, "keep arrivals before start + duration (s; 0: no end)");
  cmd.add_option("--seed", job.seed, "seed for generated workloads")->capture_default_str();
  cmd.add_option("--slo", job.slo, "goodput SLO, e.g. ttft=2s,tpot=50ms (bare numbers are ms)");
  cmd.add_option("--out", job.out, "output directory (metrics.json, requests.csv, trace.json)")->required();
  cmd.add_option("--trace-detail", job.trace_detail, "trace.json detail: none | step | op")
      ->capture_default_str();
  cli::add_trace_options(cmd, job.trace);
  cli::add_scale_options(cmd, job.scale);
  cmd.add_flag("--skip-bad-lines", job.skip_bad_lines, "skip and count malformed workload lines");
  cmd.add_flag("--json", job.json, "print the summary as one JSON object on stdout instead of the table");
  cmd.add_flag("--wall-time-in-metrics", job.wall_time_in_metrics,
               "also write wall seconds into metrics.json (makes it differ between identical runs)");
}

}  // namespace

std::vector<std::string> given_arguments(const CLI::App& cmd) {
  std::vector<std::string> args = {cmd.get_name()};
  for (const CLI::Option* o : cmd.get_options()) {
    const std::string name = o->get_name();
    if (o->count() == 0 || name == "--help" || name == "--out") continue;
    if (o->get_type_size() == 0) {  // a flag: its name once per time given
      for (size_t i = 0; i < o->count(); ++i) args.push_back(name);
      continue;
    }
    for (const std::string& value : o->results()) {
      args.push_back(name);
      args.push_back(value);
    }
  }
  return args;
}

namespace {

void add_sim(CLI::App& app) {
  auto job = std::make_shared<SimJob>();
  CLI::App* cmd = app.add_subcommand("sim", "simulate a deployment on a workload in virtual time");
  add_deployment_options(*cmd, *job);
  add_scheduler_options(*cmd, *job);
  add_pd_options(*cmd, *job);
  add_run_options(*cmd, *job);
  cmd->callback([job, cmd] {
    job->progress = ::isatty(STDERR_FILENO) != 0;
    job->arguments = given_arguments(*cmd);
    const int rc = replay_trace_path(job->backend).empty() ? run_sim_job(*job) : run_replay_job(*job);
    if (rc != 0) std::exit(rc);
  });
}

const CommandRegistration kRegistration("sim", add_sim);

}  // namespace
}  // namespace tokenline::cli
