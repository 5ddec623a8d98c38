#include "cli/engine_job.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "cli/options.h"
#include "cli/slo_option.h"
#include "common/host_memory.h"
#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "engine/runtime/cuda_devices.h"
#include "engine/runtime/model_weights.h"
#include "traces/output_file.h"

namespace tokenline::cli {
namespace {

// The kernels --backend names; nullptr for the CPU reference.
const KernelSet* backend_kernels(const std::string& backend) {
  if (backend == "cpu") return nullptr;
  if (backend != "cuda") throw InputError("--backend", "cpu or cuda", "'" + backend + "'");
  const int32_t devices = runtime_cuda_devices();
  if (devices < 0)
    throw InputError("--backend cuda", "a build with CUDA (nvcc at configure time)", "a CPU-only build");
  if (devices == 0)
    throw InputError("--backend cuda", "a CUDA device", "none (no GPU or driver on this machine)");
  return runtime_cuda_kernels();
}

void check_mtp(const EngineJob& job, const ModelShape& shape) {
  if (job.mtp_drafts < 0 || job.mtp_drafts > kMaxMtpDrafts)
    throw InputError("--mtp", "0 to " + std::to_string(kMaxMtpDrafts) + " draft tokens per decode step",
                     std::to_string(job.mtp_drafts));
  if (job.mtp_drafts > 0 && shape.mtp_layers == 0)
    throw InputError("--mtp", "a model with an MTP layer (num_nextn_predict_layers)",
                     "'" + shape.name + "' without one");
}

constexpr double kBytesPerGb = 1e9;

std::string gb_text(double bytes) {
  return number_text(std::round(bytes / kBytesPerGb * 10) / 10) + " GB";
}

// Host bytes the engine will hold at least: the FP32 checkpoint, on the CPU backend each rank's copy of
// its slice (together at least one more copy) and each rank's KV and indexer caches.
double engine_host_bytes(const ModelShape& shape, const RunnerConfig& c, bool cpu) {
  constexpr double kFp32Bytes = 4;
  double weights = 0;
  for (const TensorSpec& t : checkpoint_tensors(shape))
    weights += static_cast<double>(t.elements()) * kFp32Bytes;
  if (!cpu) return weights;
  const double ranks = static_cast<double>(c.dp_ranks) * c.tp;
  const double slots = static_cast<double>(c.total_pages) * c.page_tokens;
  const double host_slots = static_cast<double>(c.host_pages) * c.page_tokens;  // the host KV tier's
  const double kv = ranks * (slots + host_slots) *
                    static_cast<double>(shape.kv_bytes_per_token + shape.indexer_bytes_per_token);
  const double window = ranks * static_cast<double>(c.window_pages) * c.page_tokens *
                        static_cast<double>(shape.window_kv_bytes_per_token);
  const double state =
      ranks * static_cast<double>(c.state_slots) * static_cast<double>(shape.state_bytes_per_request);
  return 2 * weights + kv + window + state;
}

// Refuses a run whose weights and KV cannot fit the machine's available memory, before allocating them.
void check_host_memory(const EngineJob& job, const EngineSetup& s) {
  const std::optional<int64_t> available = available_host_bytes();
  if (!available) return;
  const double needed = engine_host_bytes(s.shape, s.runner, s.runner.kernels == nullptr);
  if (needed <= static_cast<double>(*available)) return;
  throw InputError("--model " + job.model + " --kv-pages " + std::to_string(job.kv_pages),
                   "weights (FP32) and KV that fit this machine's available memory (" +
                       gb_text(static_cast<double>(*available)) + ", /proc/meminfo MemAvailable)",
                   gb_text(needed) + " needed");
}

// A GQA hybrid's window pool (engine/core/window_kv.h): as many pages as the main pool, so that it never
// binds (a request's window pages cover tokens its main pages cover too), as the simulator's pool - sized
// from an H200's memory - never binds for the tiny presets. 0 without window layers.
int64_t engine_window_pages(const EngineJob& job, const ModelShape& shape) {
  return shape.mixer_layers(LayerMixer::kSlidingWindow) > 0 ? job.kv_pages : 0;
}

// A Gated DeltaNet hybrid's state slots (engine/core/state_pool.h): one per running request allowed.
int64_t engine_state_slots(const EngineJob& job, const ModelShape& shape) {
  return shape.mixer_layers(LayerMixer::kGatedDeltaNet) > 0 ? job.max_running : 0;
}

RunnerConfig runner_config(const EngineJob& job, const EngineSetup& s, const KernelSet* kernels) {
  RunnerConfig c{.dp_ranks = s.parallel.dp_attention,
                 .tp = s.parallel.tp,
                 .ep = s.parallel.ep,
                 .total_pages = job.kv_pages,
                 .page_tokens = static_cast<int32_t>(job.page_tokens),
                 .mtp_draft_tokens = job.mtp_drafts,
                 .op_detail = parse_detail(job.trace_detail) == TraceDetail::kOp,
                 .kernels = kernels};
  c.window_pages = engine_window_pages(job, s.shape);
  c.state_slots = engine_state_slots(job, s.shape);
  const std::string why = runner_layout_error(s.shape, c);
  if (!why.empty())
    throw InputError("--parallel", why + " for " + s.shape.name, "'" + s.parallel.name() + "'");
  return c;
}

InstanceConfig instance_config(const EngineJob& job, const EngineSetup& s) {
  InstanceConfig c;
  c.dp_ranks = s.parallel.dp_attention;
  c.assignment = PlacementPolicy::kRoundRobin;
  c.scheduler.policy = parse_policy(job.policy);
  c.scheduler.max_batch_tokens = job.chunk_tokens;
  c.scheduler.max_running_requests = job.max_running;
  c.scheduler.max_context_tokens = s.shape.max_context_tokens;
  c.scheduler.mtp_draft_tokens = job.mtp_drafts;
  c.kv.page_tokens = job.page_tokens;
  c.kv.total_pages = job.kv_pages;
  c.kv.main_bytes_per_page = s.shape.kv_bytes_per_token * job.page_tokens;
  c.kv.indexer_bytes_per_page = s.shape.indexer_bytes_per_token * job.page_tokens;
  c.kv.reservation = parse_reservation(job.reservation);
  c.kv.prefix_cache = job.prefix_cache;
  if (s.runner.window_pages > 0) {  // the window layers' own pool (docs/layers.md), read by the kernels
    c.kv.window = {.window_tokens = s.shape.window_tokens,
                   .total_pages = s.runner.window_pages,
                   .bytes_per_page = s.shape.window_kv_bytes_per_token * job.page_tokens,
                   .hold_step_context = true};
  }
  if (s.runner.state_slots > 0) {  // a state slot per running request, and no prefix cache (as sim)
    c.kv.state_slots = s.runner.state_slots;
    c.kv.state_bytes_per_slot = s.shape.state_bytes_per_request;
    c.kv.prefix_cache = false;
  }
  size_host_tier(job.kv_tier, c.kv);  // docs/kv-tiers.md: the CPU engine copies the pages it logs
  c.kv.host.log_copies = true;
  return c;
}

}  // namespace

void add_engine_options(CLI::App& cmd, EngineJob& job) {
  cmd.add_option("--backend", job.backend, "cpu | cuda")->capture_default_str();
  cmd.add_option(
         "--model", job.model,
         "model preset or config.json (MLA + DSA, or GQA with sliding-window / Gated DeltaNet layers)")
      ->capture_default_str();
  cmd.add_option("--weights", job.weights, "safetensors checkpoint (default: random weights from --seed)");
  cmd.add_option("--out", job.out, "output directory (metrics.json, requests.csv, trace.json)")->required();
  cmd.add_option("--seed", job.seed, "seed for weights, synthetic workloads and prompt tokens")
      ->capture_default_str();
  cmd.add_option("--chunk", job.chunk_tokens, "token budget per step = prefill chunk")->capture_default_str();
  cmd.add_option("--page-size", job.page_tokens, "KV page size in tokens")->capture_default_str();
  cmd.add_option("--kv-pages", job.kv_pages, "KV pages per rank")->capture_default_str();
  cmd.add_option(
         "--parallel", job.parallel,
         "tpN, dpN, epN parts, e.g. tp2, dp2-ep2, dp2-tp2-ep4 (ep: 1 or every rank; threads as ranks)")
      ->capture_default_str();
  cmd.add_option("--mtp", job.mtp_drafts,
                 "MTP draft tokens per decode step (the MTP layer chained; greedy, lossless)")
      ->capture_default_str();
  cmd.add_option("--reservation", job.reservation, "whole | incremental")->capture_default_str();
  cmd.add_option("--policy", job.policy, "fcfs | lpm | priority")->capture_default_str();
  cmd.add_option("--max-running", job.max_running, "running requests")->capture_default_str();
  cmd.add_flag("!--no-prefix-cache", job.prefix_cache, "disable the radix prefix cache");
  add_kv_tier_options(cmd, job.kv_tier, false);
  cmd.add_option("--trace-detail", job.trace_detail, "none | step | op")->capture_default_str();
  add_trace_options(cmd, job.trace);
  cmd.add_option("--slo", job.slo, "goodput SLO, e.g. ttft=2s,tpot=50ms (bare numbers are ms)");
}

EngineSetup prepare_engine(const EngineJob& job) {
  const KernelSet* kernels = backend_kernels(job.backend);
  require_positive(job.chunk_tokens, "--chunk");
  require_positive(job.page_tokens, "--page-size");
  require_positive(job.kv_pages, "--kv-pages");
  require_positive(job.max_running, "--max-running");
  if (job.out.empty()) throw InputError("--out", "an output directory", "nothing");
  EngineSetup s;
  s.parallel = parse_parallel(job.parallel, "--parallel");
  s.shape = load_model_shape(job.model);
  if (!backend_runs_model(s.shape, kernels))  // the CUDA set lacks the GQA / Gated DeltaNet kernels
    throw InputError("--backend " + job.backend,
                     "cpu for " + s.shape.name + " (GQA / Gated DeltaNet kernels)", "'" + job.backend + "'");
  if (job.page_tokens > s.shape.max_context_tokens)
    throw InputError(
        "--page-size",
        "at most " + s.shape.name + "'s context of " + std::to_string(s.shape.max_context_tokens) + " tokens",
        std::to_string(job.page_tokens));
  require_at_most(job.kv_pages, limits::kMaxKvPages, "--kv-pages");
  check_mtp(job, s.shape);
  check_kv_tier_flags(job.kv_tier);
  s.runner = runner_config(job, s, kernels);
  s.instance = instance_config(job, s);
  s.runner.host_pages = s.instance.kv.host.pages;
  check_host_memory(job, s);
  require_writable_directory(job.out);
  s.output = OutputConfig{.dir = job.out, .trace_detail = parse_detail(job.trace_detail)};
  apply_trace_options(job.trace, s.output);
  s.slo = parse_slo(job.slo);
  return s;
}

ModelWeights engine_weights(const EngineJob& job, const ModelShape& shape) {
  return job.weights.empty() ? ModelWeights::random(shape, job.seed) : ModelWeights::load(shape, job.weights);
}

RunInfo engine_run_info(const EngineJob& job, const EngineSetup& setup, const char* mode) {
  RunInfo info;
  info.mode = mode;
  info.backend = job.backend;
  info.model = setup.shape.name;
  info.hardware = job.backend;
  info.parallelism = setup.parallel.name();
  info.router = "round-robin";
  info.seed = job.seed;
  return info;
}

void print_engine_summary(const char* mode, const Metrics& m, const EngineLoopResult& result,
                          const std::string& out) {
  std::fprintf(stderr,
               "tokenline %s: %lld arrived, %lld completed, %lld rejected, %lld preemptions, %lld steps in "
               "%.3f s; outputs in %s\n",
               mode, static_cast<long long>(m.arrived()), static_cast<long long>(m.completed()),
               static_cast<long long>(m.rejected()), static_cast<long long>(m.preemptions()),
               static_cast<long long>(result.steps), result.end_s, out.c_str());
  const int64_t in_flight = m.arrived() - m.completed() - m.rejected();
  if (in_flight > 0) {
    std::fprintf(stderr,
                 "tokenline %s: warning: %lld requests neither completed nor were rejected (the instance "
                 "could not schedule them)\n",
                 mode, static_cast<long long>(in_flight));
  }
}

RealEngine::RealEngine(const EngineJob& job, const EngineSetup& setup)
    : runner(setup.shape, engine_weights(job, setup.shape), setup.runner, clock),
      instance(setup.instance),
      recorder(setup.output, setup.slo, 1) {
  recorder.describe_instance(0, setup.parallel.name(), setup.parallel.dp_attention, job.kv_pages);
}

int finish_engine(RealEngine& engine, RunInfo info, const EngineLoopResult& result, const char* command,
                  const std::string& out) {
  info.simulated_s = result.end_s;
  std::string why;
  if (!engine.recorder.finish(info, &why)) {
    std::fprintf(stderr, "tokenline %s: %s\n", command, why.c_str());
    return 1;
  }
  print_engine_summary(command, engine.recorder.metrics(), result, out);
  return 0;
}

}  // namespace tokenline::cli
