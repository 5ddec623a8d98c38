#include "cli/sim_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/accuracy_table.h"
#include "cli/options.h"
#include "cli/pd_job.h"
#include "cli/preset_names.h"
#include "cli/run_summary.h"
#include "cli/slo_option.h"
#include "cli/time_source_choice.h"
#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "cost/memory.h"
#include "cost/op_profile.h"
#include "run/model_files.h"
#include "run/workload_arrivals.h"
#include "sim/backends/cluster_hardware.h"
#include "sim/backends/replay_backend.h"
#include "sim/driver/pd_simulation.h"
#include "sim/driver/simulation.h"
#include "topologies/hardware_loader.h"
#include "traces/output_file.h"
#include "traces/run_speed.h"

namespace tokenline {
namespace {

using cli::kMaxMtpDrafts;
using cli::parse_detail;
using cli::parse_placement_option;
using cli::parse_policy;
using cli::require_at_most;
using cli::require_positive;
using cli::reservation_of;

bool parse_on_off(const std::string& v, const char* option) {
  if (v == "on") return true;
  if (v == "off") return false;
  throw InputError(option, "on or off", "'" + v + "'");
}

// What a job takes when neither a flag nor its profile's engine block says: the seed's engine.
constexpr int64_t kSeedChunkTokens = 32768;  // the seed's 1M prefill: 32 chunks of 32768 tokens
// A simulation prices thousands of steps: the profile's curves remember each whole token count up to this
// (a rank's decode batch, and its prefill chunk under DP attention), 32 KiB per curve.
constexpr int64_t kRememberedTokens = 4096;

// "A:B" -> true and its two numbers; "off" -> false; anything else throws naming the flag (exit 2).
bool parse_pair(const std::string& v, const char* option, const char* expected, double& a, double& b) {
  if (v == "off") return false;
  const size_t colon = v.find(':');
  if (colon != std::string::npos) {
    const std::string_view all(v);
    const std::optional<double> first = parse_finite_number(all.substr(0, colon));
    const std::optional<double> second = parse_finite_number(all.substr(colon + 1));
    if (first && second) {
      a = *first;
      b = *second;
      return true;
    }
  }
  throw InputError(option, expected, "'" + v + "'");
}

int32_t whole_iters(double x, const char* option, const char* expected, const std::string& v) {
  if (!(x >= 0 && x <= (1 << 20)) || x != std::floor(x)) throw InputError(option, expected, "'" + v + "'");
  return int32_t(x);
}

// TensorRT-LLM's batch waiting and attention-DP balancing flags over the engine's fields.
// SGLang's --moe-a2a-backend (server_args.py: "none" by default; the MoE's token dispatcher follows it,
// layers/moe/token_dispatcher/). none: the StandardDispatcher moves no token under EP, each rank runs its own
// experts over the tokens it holds (MoeComm::kLocalExperts); deepep: DeepEP's all-to-all dispatch and
// combine (MoeComm::kAllToAll).
void apply_moe_a2a_backend(OpProfile& profile, const std::string& backend) {
  if (!profile.has_engine)
    throw InputError("--moe-a2a-backend", "a --profile with an engine block (its MoE communication)",
                     profile.name + " without one");
  if (profile.engine.engine == "vllm")
    throw InputError("--moe-a2a-backend", "an SGLang profile (vLLM's flag is --all2all-backend)",
                     profile.name);
  if (backend == "none") {
    profile.engine.moe_comm = MoeComm::kLocalExperts;
  } else if (backend == "deepep") {
    profile.engine.moe_comm = MoeComm::kAllToAll;
  } else {
    throw InputError("--moe-a2a-backend", "none or deepep", "'" + backend + "'");
  }
}

// vLLM's --all2all-backend (vllm/config/parallel.py All2AllBackend; vllm/distributed/device_communicators/
// cuda_communicator.py builds the manager of that name). allgather_reducescatter (the default) and naive
// (broadcasts) gather every DP rank's hidden states before each MoE layer and scatter the output
// (MoeComm::kGatherOrAllReduce); the others dispatch and combine the rank's tokens
// (MoeComm::kAllToAllUnderDp). vLLM runs any of them only under data parallelism (fused_moe/config.py
// use_all2all_kernels).
void apply_all2all_backend(OpProfile& profile, const std::string& backend) {
  if (!profile.has_engine || profile.engine.engine != "vllm")
    throw InputError("--all2all-backend",
                     "a vLLM profile (--engine vllm; SGLang's flag is --moe-a2a-backend)", profile.name);
  static constexpr std::pair<std::string_view, MoeComm> kBackends[] = {
      {"allgather_reducescatter", MoeComm::kGatherOrAllReduce},
      {"naive", MoeComm::kGatherOrAllReduce},
      {"deepep_high_throughput", MoeComm::kAllToAllUnderDp},
      {"deepep_low_latency", MoeComm::kAllToAllUnderDp},
      {"pplx", MoeComm::kAllToAllUnderDp},
      {"mori", MoeComm::kAllToAllUnderDp},
      {"nixl_ep", MoeComm::kAllToAllUnderDp},
      {"flashinfer_all2allv", MoeComm::kAllToAllUnderDp},
      {"flashinfer_nvlink_two_sided", MoeComm::kAllToAllUnderDp},
      {"flashinfer_nvlink_one_sided", MoeComm::kAllToAllUnderDp}};
  std::string names;
  for (const auto& [name, comm] : kBackends) {
    if (backend == name) {
      profile.engine.moe_comm = comm;
      return;
    }
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  throw InputError("--all2all-backend", names, "'" + backend + "'");
}

void apply_context_hold_flags(const SimJob& job, EngineBehavior& b) {
  double x = 0;
  double y = 0;
  if (!job.batch_wait.empty()) {
    constexpr const char* kExpected =
        "ITERS:RATIO (batch_wait_timeout_iters >= 0 whole, batch_wait_max_tokens_ratio in [0, 1]) or off";
    if (parse_pair(job.batch_wait, "--batch-wait", kExpected, x, y)) {
      b.batch_wait_timeout_iters = whole_iters(x, "--batch-wait", kExpected, job.batch_wait);
      if (!(y >= 0 && y <= 1)) throw InputError("--batch-wait", kExpected, "'" + job.batch_wait + "'");
      b.batch_wait_max_tokens_ratio = y;
    } else {
      b.batch_wait_timeout_iters = 0;
      b.batch_wait_max_tokens_ratio = 0;
    }
  }
  if (!job.attention_dp_balance.empty()) {
    constexpr const char* kExpected = "TIMEOUT_ITERS:BATCHING_WAIT_ITERS (whole numbers >= 0) or off";
    b.attention_dp_balance = parse_pair(job.attention_dp_balance, "--attention-dp-balance", kExpected, x, y);
    if (b.attention_dp_balance) {
      b.attention_dp_timeout_iters =
          whole_iters(x, "--attention-dp-balance", kExpected, job.attention_dp_balance);
      b.attention_dp_batching_wait_iters =
          whole_iters(y, "--attention-dp-balance", kExpected, job.attention_dp_balance);
    }
  }
}

// The engine the job simulates: its profile's engine block (--profile), else the seed's (whole-request
// reservation, mixed steps, KV sharded over TP, the hardware's usable fraction), with each flag that was
// given overriding its field.
EngineBehavior engine_behavior(const SimJob& job, const OpProfile* profile) {
  const EngineBehavior* profiled = profile_engine(profile);
  const bool from_profile = profiled != nullptr;
  EngineBehavior b = from_profile ? *profiled : seed_behavior();
  if (job.chunk_tokens > 0) {
    b.chunked_prefill_size = job.chunk_tokens;
    b.chunk_split_over_dp = false;  // --chunk is one attention rank's budget, as --max-running is
  } else if (!from_profile) {
    b.chunked_prefill_size = kSeedChunkTokens;
  }
  if (job.max_running > 0) b.max_running_requests = job.max_running;
  if (!job.reservation.empty()) b.admission = parse_admission(job.reservation, "--reservation");
  if (!job.mixed_steps.empty()) b.mixed_steps = parse_on_off(job.mixed_steps, "--mixed-steps");
  if (!job.plan_ahead.empty()) b.plan_ahead = parse_on_off(job.plan_ahead, "--plan-ahead");
  if (!job.kv_replicated.empty()) {
    b.kv_placement = parse_on_off(job.kv_replicated, "--kv-replicated") ? KvPlacement::kPerTpRank
                                                                        : KvPlacement::kShardedOverTp;
  }
  if (job.mem_fraction != 0) b.mem_fraction_static = job.mem_fraction;  // in (0, 1]: check_numbers
  if (job.swa_full_tokens_ratio != 0) b.swa_full_tokens_ratio = job.swa_full_tokens_ratio;
  if (!job.prefix_cache) b.radix_cache = false;  // SGLang's --disable-radix-cache
  apply_context_hold_flags(job, b);
  return b;
}

// One attention rank's step token budget (= prefill chunk): --chunk as given, else the engine's on this
// device and layout (SGLang's is the instance's, split over the DP-attention ranks).
int64_t chunk_tokens(const EngineBehavior& b, const Hardware& hw, const Parallel& p) {
  return resolve_engine(b, hw, p.tp, p.dp_attention).rank_chunk_tokens;
}

EstimateConfig estimate_config(const TokenRatio& t) {
  return EstimateConfig{.init_ratio = t.init,
                        .min_ratio = t.min_ratio(),
                        .ratio_decay = t.decay_per_step(),
                        .retract_headroom_tokens = t.retract_decode_steps,
                        .clip_output_tokens = t.clip_max_new_tokens};
}

Backend parse_backend(const std::string& v) {
  if (v == "analytic") return Backend::kAnalytic;
  if (v == "simgrid") return Backend::kSimgrid;
  if (!replay_trace_path(v).empty())
    return Backend::kAnalytic;  // replay: sized as analytic, timed by the trace
  throw InputError("--backend", "analytic, simgrid or replay:<trace.json>", "'" + v + "'");
}

// --kv-overlap-score-weight / --router-temperature: Dynamo's KV router weights (engine/core/placement.h),
// for --router kv-aware only.
KvAwareWeights kv_aware_weights(const SimJob& job, PlacementPolicy router) {
  const KvAwareWeights defaults;
  const bool given = job.kv_overlap_score_weight != defaults.overlap_score_weight ||
                     job.router_temperature != defaults.temperature;
  if (given && router != PlacementPolicy::kKvAware)
    throw InputError(
        job.router_temperature != defaults.temperature ? "--router-temperature" : "--kv-overlap-score-weight",
        "--router kv-aware (the weights of its cost)", "--router " + job.router);
  if (!(job.kv_overlap_score_weight >= 0))
    throw InputError("--kv-overlap-score-weight", "a weight >= 0",
                     std::to_string(job.kv_overlap_score_weight));
  if (!(job.router_temperature >= 0))
    throw InputError("--router-temperature", "a temperature >= 0", std::to_string(job.router_temperature));
  return KvAwareWeights{.overlap_score_weight = job.kv_overlap_score_weight,
                        .temperature = job.router_temperature,
                        .seed = job.seed};
}

void check_numbers(const SimJob& job) {
  require_positive(job.instances, "--instances");
  require_at_most(job.instances, limits::kMaxInstances, "--instances");
  require_at_most(job.kv_pages, limits::kMaxKvPages, "--kv-pages");
  check_kv_tier_flags(job.kv_tier);
  if (job.mtp_drafts < 0 || job.mtp_drafts > kMaxMtpDrafts)
    throw InputError("--mtp", "0 to " + std::to_string(kMaxMtpDrafts) + " draft tokens per decode step",
                     std::to_string(job.mtp_drafts));
  if (job.chunk_tokens < 0)
    throw InputError("--chunk", "a positive token count (0: the engine's default)",
                     std::to_string(job.chunk_tokens));
  if (job.max_prefill_tokens < 0)
    throw InputError("--max-prefill-tokens", "a positive token count (0: the chunk)",
                     std::to_string(job.max_prefill_tokens));
  require_positive(job.page_tokens, "--page-size");
  if (job.max_running < 0)
    throw InputError("--max-running", "a positive count (0: the engine's default)",
                     std::to_string(job.max_running));
  if (job.prefill_max_running < 0)
    throw InputError("--prefill-max-running", "a positive count (0: the same as --max-running)",
                     std::to_string(job.prefill_max_running));
  const auto require_fraction = [](double v, const char* option, const std::string& expected) {
    if (v != 0 && !(v > 0 && v <= 1)) throw InputError(option, expected, std::to_string(v));
  };
  require_fraction(job.mem_fraction, "--mem-fraction", "a fraction in (0, 1]");
  require_fraction(job.swa_full_tokens_ratio, "--swa-full-tokens-ratio", "a ratio in (0, 1]");
  require_fraction(job.prefill_mem_fraction, "--prefill-mem-fraction",
                   "a fraction in (0, 1] (0: the same as --mem-fraction)");
  if (job.kv_pages < 0)
    throw InputError("--kv-pages", "0 (auto) or a positive page count", std::to_string(job.kv_pages));
  if (job.concurrency < 0)
    throw InputError("--concurrency", "0 (open loop) or a positive count", std::to_string(job.concurrency));
  if (job.warmup_requests < 0 || (job.warmup_requests > 0 && job.concurrency == 0))
    throw InputError("--warmup", "0, or a positive count with --concurrency (a closed loop)",
                     std::to_string(job.warmup_requests) +
                         (job.concurrency == 0 && job.warmup_requests > 0 ? " in open loop" : ""));
  if (job.max_requests < 0)
    throw InputError("--max-requests", "0 (all) or a positive count", std::to_string(job.max_requests));
  if (job.duration_s < 0)
    throw InputError("--duration", "seconds >= 0 (0: no end)", std::to_string(job.duration_s));
  if (job.out.empty()) throw InputError("--out", "an output directory", "nothing");
}

// What the run took without being told, and what --rate found: for the summary (cli/run_summary.h).
struct Resolved {
  std::vector<std::string> defaults;
  double native_rate_rps = 0;         // the workload's own rate, when --rate rescaled it
  cli::TimeSourceChoice time_source;  // what prices the steps, and why
};

// The workload a run takes without --workload: chat requests as a service receives them, the first 1,000 of
// the Azure LLM inference trace 2023 conversation service (1,014 prompt / 247 output tokens on average, 4.6
// requests/s; docs/data/SOURCE.md), compiled in. The Mooncake conversation head ("--workload default", the
// seed's and quickstart's) averages 13,900-token prompts: 5 requests/s of them is 9.7 PFLOP/s of
// Llama-3.1-70B prefill, past eight H200s' 7.9 PFLOP/s dense BF16 peak, so it answers a long-context
// question.
constexpr const char* kChatWorkload = "embedded:azure_conv_head1000.jsonl";

// vllm bench serve --num-prompts' default: enough requests for a steady state at most rates.
constexpr int64_t kSyntheticRequests = 1000;

std::string synthetic_length(int64_t mean, double range_ratio) {
  if (range_ratio == 0) return "fixed:" + std::to_string(mean);
  // vllm bench serve --random-range-ratio: uniform in [x (1 - r), x (1 + r)] (truncated to integers)
  const auto lo = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(mean) * (1 - range_ratio)));
  const auto hi = std::max(lo, static_cast<int64_t>(static_cast<double>(mean) * (1 + range_ratio)));
  return "uniform:" + std::to_string(lo) + ":" + std::to_string(hi);
}

// --isl / --osl: a synthetic workload at --rate (Poisson), or for a closed loop.
std::string synthetic_workload(const SimJob& job) {
  if (!job.workload.empty())
    throw InputError("--isl / --osl", "no --workload (they describe a synthetic one)",
                     "--workload " + job.workload);
  if (job.isl <= 0 || job.osl <= 0)
    throw InputError("--isl / --osl", "both, as positive token counts",
                     std::to_string(job.isl) + " / " + std::to_string(job.osl));
  if (!(job.range_ratio >= 0 && job.range_ratio < 1))
    throw InputError("--range-ratio", "a ratio in [0, 1)", std::to_string(job.range_ratio));
  if (job.rate <= 0 && job.concurrency == 0)
    throw InputError("--rate", "a request rate for an --isl / --osl workload (or --concurrency N)", "none");
  const int64_t n = job.max_requests > 0 ? job.max_requests : kSyntheticRequests;
  std::string spec = "synthetic:n=" + std::to_string(n);
  if (job.rate > 0) spec += ",rate=" + std::to_string(job.rate);
  return spec + ",input=" + synthetic_length(job.isl, job.range_ratio) +
         ",output=" + synthetic_length(job.osl, job.range_ratio);
}

WorkloadSpec workload_spec(const SimJob& job, Resolved* resolved = nullptr) {
  const bool synthetic_lengths = job.isl != 0 || job.osl != 0;
  if (!synthetic_lengths && job.range_ratio != 0)
    throw InputError("--range-ratio", "--isl and --osl to spread", std::to_string(job.range_ratio));
  WorkloadSpec w;
  w.spec = synthetic_lengths ? synthetic_workload(job) : job.workload.empty() ? kChatWorkload : job.workload;
  w.options.reader.skip_bad_lines = job.skip_bad_lines;
  w.options.seed = job.seed;
  w.options.window.time_scale = job.time_scale;
  w.options.window.start_s = job.start_s;
  if (job.duration_s > 0) w.options.window.duration_s = job.duration_s;
  if (job.max_requests > 0) w.options.window.max_requests = job.max_requests;
  w.options.window.closed_loop = job.concurrency > 0;
  w.session_clients = job.concurrency;  // a session workload: its clients
  w.warmup_requests = job.warmup_requests;
  if (job.rate != 0) {
    if (job.time_scale != 1.0)
      throw InputError("--rate", "either --rate or --time-scale (both set the arrival rate)", "both");
    if (job.concurrency > 0)
      throw InputError("--rate", "an open loop (--concurrency sends as requests leave, at no rate)",
                       "--concurrency " + std::to_string(job.concurrency));
    if (!synthetic_lengths) {  // an --isl / --osl workload is generated at the rate itself
      // With --duration D (from the start), the rate of the first R x D + 1 requests, the ones the run
      // keeps: the whole trace's average would offer a bursty trace's slower opening at another rate
      // (--rate 2 --duration 20 on the embedded chat trace offered 0.46 req/s).
      WorkloadSpec kept = w;
      if (job.duration_s > 0 && job.start_s == 0 && job.rate > 0 && std::isfinite(job.rate)) {
        const auto n = static_cast<int64_t>(std::min(std::ceil(job.rate * job.duration_s) + 1, 1e12));
        kept.options.window.max_requests = job.max_requests > 0 ? std::min(n, job.max_requests) : n;
      }
      const double native = native_rate_rps(kept);
      w.options.window.time_scale = time_scale_for_rate(native, job.rate);
      if (resolved != nullptr) resolved->native_rate_rps = native;
    } else if (!(job.rate > 0) || !std::isfinite(job.rate)) {
      throw InputError("--rate", "a positive, finite request rate (requests per second)",
                       std::to_string(job.rate));
    }
  }
  check_window(w.options.window);
  return w;
}

struct Deployment {
  Hardware hardware;
  std::string hardware_name;
  std::string cluster_name;
  std::vector<CostModel> cost_models;  // one per instance
};

std::vector<Parallel> parse_layouts(const SimJob& job, const ModelConfig& model);

// One NVLink domain (an HGX node): a default layout keeps tensor parallelism inside it, as engines do.
constexpr int32_t kNodeGpus = 8;

// --hardware and --cluster name the same thing: both is a conflict, neither is h200.
void resolve_hardware(SimJob& job, Resolved& resolved) {
  if (!job.hardware.empty() && !job.cluster.empty())
    throw InputError("--hardware " + job.hardware,
                     "either --hardware or --cluster (the cluster names its hardware)",
                     "both, with --cluster " + job.cluster);
  if (job.hardware.empty() && job.cluster.empty()) {
    job.hardware = "h200";
    resolved.defaults.push_back("hardware h200 (no --hardware)");
  }
}

// Each instance's GPUs: --gpus over the instances, else the cluster's, else one node's.
int32_t instance_gpus(const SimJob& job, Resolved& resolved) {
  if (job.gpus < 0) throw InputError("--gpus", "a positive GPU count", std::to_string(job.gpus));
  require_at_most(job.gpus, limits::kMaxInstances * kNodeGpus, "--gpus");
  const int32_t total = job.gpus > 0           ? job.gpus
                        : !job.cluster.empty() ? load_cluster_hardware(job.cluster).gpus
                                               : kNodeGpus * job.instances;
  if (total % job.instances != 0 || total < job.instances)
    throw InputError("--gpus", "a multiple of the " + std::to_string(job.instances) + " instances",
                     std::to_string(total) + " GPUs");
  if (job.gpus == 0 && job.cluster.empty())
    resolved.defaults.push_back("GPUs " + std::to_string(kNodeGpus) + " per instance (no --gpus)");
  return total / job.instances;
}

bool layout_fits(const std::string& name, const ModelConfig& model) {
  try {
    validate_parallel(parse_parallel(name, "--parallel"), model, "--parallel");
    return true;
  } catch (const InputError&) {
    return false;
  }
}

// The engine whose launch a default layout follows: --engine, else the engine block of --profile, else
// SGLang (the default engine, and the seed's under --roofline / --ideal).
std::string layout_engine(const SimJob& job) {
  if (!job.engine.empty()) return job.engine;
  if (job.profile.empty() || job.roofline || job.ideal) return cli::kDefaultEngine;
  const EngineBehavior* e = profile_engine(load_op_profile(job.profile).get());
  return e != nullptr ? e->engine : cli::kDefaultEngine;
}

// No --parallel: what the model and GPUs allow. A dense model: tensor parallelism over the instance's GPUs
// (inside one node; more GPUs become more instances). An MoE model under SGLang: its usual large-MoE layout,
// DP attention with expert parallelism over them (DeepSeek/GLM: --tp N --dp N --enable-dp-attention --ep N).
// Under vLLM and TensorRT-LLM: what the engine runs when given N GPUs and nothing else, tensor parallelism
// with the experts sharded by TP too - vLLM splits experts only with --enable-expert-parallel (default off,
// vllm/config/parallel.py), TensorRT-LLM sets moe_tp_size = tp_size and moe_ep_size 1 when neither is
// given (tensorrt_llm/mapping.py) - then the DP + EP layouts where TP does not fit.
void resolve_layout(SimJob& job, const ModelConfig& model, Resolved& resolved) {
  if (!job.parallel.empty()) {
    if (job.gpus <= 0) return;
    int32_t gpus = 0;
    for (const Parallel& p : parse_layouts(job, model)) gpus += p.gpus();
    if (gpus != job.gpus)
      throw InputError("--gpus",
                       "the " + std::to_string(gpus) + " GPUs of --parallel " + job.parallel + " x " +
                           std::to_string(job.instances) + " instance(s)",
                       std::to_string(job.gpus));
    return;
  }
  const int32_t g = instance_gpus(job, resolved);
  const std::string n = std::to_string(g);
  if (model.routed_experts > 0) {
    const std::string engine = layout_engine(job);
    if (engine != "sglang" && layout_fits("tp" + n, model)) {
      job.parallel = "tp" + n;
      resolved.defaults.push_back("layout " + job.parallel + " (MoE model on " + n +
                                  " GPUs per instance: " + engine_display_name(engine) +
                                  "'s default, experts sharded by tensor parallelism)");
      return;
    }
    for (const std::string& name : {"dp" + n + "-ep" + n, "tp" + n + "-ep" + n}) {
      if (!layout_fits(name, model)) continue;
      job.parallel = name;
      resolved.defaults.push_back(
          "layout " + name + " (MoE model on " + n + " GPUs per instance: DP attention + expert parallelism" +
          (engine == "sglang" ? ", SGLang's usual)" : ": tp" + n + " does not divide it)"));
      return;
    }
  } else {
    for (int32_t tp = std::min(g, kNodeGpus); tp >= 1; --tp) {
      if (g % tp != 0 || !layout_fits("tp" + std::to_string(tp), model)) continue;
      const int32_t copies = g / tp;
      if (copies > 1 && !job.pd.empty())
        throw InputError("--parallel", "a layout for " + n + " GPUs per --pd instance", "none given");
      job.parallel = "tp" + std::to_string(tp);
      job.instances *= copies;
      resolved.defaults.push_back("layout " + job.parallel + " x " + std::to_string(job.instances) +
                                  " instance(s) (dense model: tensor parallel inside a node)");
      return;
    }
  }
  throw InputError("--parallel", "a layout (none of the defaults fits " + model.name + " on " + n + " GPUs)",
                   "none given");
}

Hardware job_hardware(const SimJob& job) {
  return job.cluster.empty() ? load_hardware(job.hardware) : load_cluster_hardware(job.cluster).hardware;
}

// --profile, --engine, --roofline, --ideal or the best available (cli/time_source_choice.h): sets the
// profile the job prices with and says why. REQUIRES: the hardware and the layout resolved.
void resolve_time_source(SimJob& job, const ModelConfig& model, Resolved& resolved) {
  if (!job.profile_set.empty() && job.profile.empty() && job.engine.empty())
    throw InputError("--profile-set", "a --profile (or --engine) to override", "no --profile");
  if (!job.speed_of.empty() && job.profile.empty())
    throw InputError("--speed-of", "a --profile measured by tokenline profile", "no --profile");
  const cli::TimeSourceFlags flags{.profile = job.profile,
                                   .engine = job.engine,
                                   .roofline = job.roofline,
                                   .ideal = job.ideal,
                                   .replay = !replay_trace_path(job.backend).empty()};
  resolved.time_source =
      cli::choose_time_source(flags, model, parse_layouts(job, model), job_hardware(job), job.kv_layout);
  job.profile = resolved.time_source.profile;
  if (!resolved.time_source.defaulted) return;
  resolved.defaults.push_back(resolved.time_source.kind == "roofline"
                                  ? "engine: the seed's, times from the roofline (" +
                                        resolved.time_source.why + ")"
                                  : "engine " + std::string(cli::kDefaultEngine) + ", profile " +
                                        job.profile + " (no --engine or --profile)");
}

// "--parallel tp8,dp8-ep8": one layout per instance; a single layout is repeated --instances times.
std::vector<Parallel> parse_layouts(const SimJob& job, const ModelConfig& model) {
  std::vector<Parallel> layouts;
  size_t begin = 0;
  while (begin <= job.parallel.size()) {
    size_t end = job.parallel.find(',', begin);
    if (end == std::string::npos) end = job.parallel.size();
    layouts.push_back(parse_parallel(job.parallel.substr(begin, end - begin), "--parallel"));
    validate_parallel(layouts.back(), model, "--parallel");
    begin = end + 1;
  }
  if (layouts.size() == 1) return std::vector<Parallel>(static_cast<size_t>(job.instances), layouts.front());
  if (job.instances != 1 && job.instances != static_cast<int32_t>(layouts.size())) {
    throw InputError("--instances", std::to_string(layouts.size()) + " (one per --parallel layout) or 1",
                     std::to_string(job.instances));
  }
  return layouts;
}

void check_cluster_gpus(const SimJob& job, const ClusterHardware& cluster,
                        const std::vector<Parallel>& layouts) {
  int needed = 0;
  for (const Parallel& p : layouts) needed += p.gpus();
  if (needed > cluster.gpus) {
    throw InputError("--cluster " + job.cluster,
                     "at least " + std::to_string(needed) + " GPUs for " + std::to_string(layouts.size()) +
                         " instance(s) of " + job.parallel,
                     std::to_string(cluster.gpus) + " GPUs");
  }
}

Deployment load_deployment(const SimJob& job, const ModelConfig& model, const std::vector<Parallel>& layouts,
                           Resolved& resolved) {
  Deployment d;
  if (!job.cluster.empty()) {
    const ClusterHardware cluster = load_cluster_hardware(job.cluster);
    check_cluster_gpus(job, cluster, layouts);
    d.hardware = cluster.hardware;
    d.hardware_name = cluster.hardware.name;
    d.cluster_name = cluster.name;
  } else {
    d.hardware = load_hardware(job.hardware);
    d.hardware_name = job.hardware;
  }
  CostOptions options;
  options.ideal = job.ideal;
  options.mtp = job.mtp_drafts > 0;
  options.tier_load_overlap = parse_load_overlap(job.kv_tier.load_overlap);
  if (!job.profile_set.empty() && job.profile.empty())
    throw InputError("--profile-set", "a --profile to override", "no --profile");
  if (!job.speed_of.empty() && job.profile.empty())
    throw InputError("--speed-of", "a --profile measured by tokenline profile", "no --profile");
  if (!job.moe_a2a_backend.empty() && job.profile.empty())
    throw InputError("--moe-a2a-backend", "a --profile (or --engine) with an engine block", "no --profile");
  if (!job.all2all_backend.empty() && job.profile.empty())
    throw InputError("--all2all-backend", "a vLLM --profile (or --engine vllm)", "no --profile");
  if (!job.moe_runner_backend.empty() && job.profile.empty())
    throw InputError("--moe-runner-backend", "a --profile (or --engine) holding MoE runner tables",
                     "no --profile");
  // SGLang's NSA backends (0.5.x server_args.py NSA_CHOICES): a name of its list, priced by a profile
  const auto check_nsa = [&](const char* flag, const std::string& value) {
    static constexpr std::string_view kNsaBackends[] = {
        "flashmla_sparse", "flashmla_kv", "flashmla_auto", "fa3", "tilelang", "aiter", "trtllm"};
    if (value.empty()) return;
    if (std::find(std::begin(kNsaBackends), std::end(kNsaBackends), value) == std::end(kNsaBackends)) {
      std::string names;
      for (std::string_view n : kNsaBackends) names += (names.empty() ? "" : ", ") + std::string(n);
      throw InputError(flag, "one of SGLang's NSA backends: " + names, value);
    }
    if (job.profile.empty())
      throw InputError(flag, "a --profile (or --engine) of SGLang's kernels", "no --profile");
  };
  check_nsa("--nsa-prefill-backend", job.nsa_prefill_backend);
  check_nsa("--nsa-decode-backend", job.nsa_decode_backend);
  if (!job.moe_backend.empty() && job.profile.empty())
    throw InputError("--moe-backend",
                     "a vLLM or TensorRT-LLM --profile (or --engine) holding MoE backend tables",
                     "no --profile");
  if (!job.profile.empty()) {
    auto profile = load_op_profile(job.profile);
    if (!job.speed_of.empty()) set_speed_from_run(*profile, run_speed_probe_s(job.speed_of), "--speed-of");
    const std::string schedule = apply_speculative_schedule(*profile, job.mtp_drafts);
    // SGLang's NSA backends before --profile-set, which may name the term itself
    if (job.nsa_prefill_backend == "trtllm" && job.nsa_decode_backend == "trtllm")
      apply_profile_sets(*profile, "dsa_trtllm_backend=1");
    else if (job.nsa_prefill_backend == "trtllm" || job.nsa_decode_backend == "trtllm")
      std::fprintf(stderr,
                   "tokenline sim: the TensorRT-LLM NSA backend in one phase only: the DSA parts price the "
                   "attention (the block rows need it in both)\n");
    apply_profile_sets(*profile, job.profile_set);
    if (!schedule.empty() && profile->param(TimingParam::kOverlapSchedule) == 0)  // not --profile-set back on
      resolved.defaults.push_back(schedule);
    if (!job.moe_runner_backend.empty() &&
        !select_moe_runner(*profile, job.moe_runner_backend, "--moe-runner-backend"))
      std::fprintf(stderr,
                   "tokenline sim: %s holds no table of the MoE runner %s; its moe table (%s) prices the "
                   "fused MoE\n",
                   job.profile.c_str(), job.moe_runner_backend.c_str(),
                   profile->moe_runner.empty() ? "runner not stated" : profile->moe_runner.c_str());
    if (!job.moe_backend.empty() && !select_moe_backend(*profile, job.moe_backend, "--moe-backend")) {
      std::string aside;  // formats whose rows time another backend's kernel: priced without rows
      for (const auto& [dtype, by] : profile->moe_format_backends)
        if (by != job.moe_backend)
          aside += (aside.empty() ? "" : ", ") + dtype + " (its rows time " + by + "'s kernel)";
      std::fprintf(stderr,
                   "tokenline sim: %s holds no table of the MoE backend %s; its moe table (%s) prices the "
                   "fused MoE%s%s\n",
                   job.profile.c_str(), job.moe_backend.c_str(),
                   profile->moe_backend.empty() ? "backend not stated" : profile->moe_backend.c_str(),
                   aside.empty() ? "" : ", but not ",
                   aside.empty() ? "" : (aside + ": priced from another format's rows, scaled").c_str());
    }
    // vLLM 0.12-0.16 run block-FP8 experts on DeepGEMM on Hopper by default (docs/hardware-and-engines.md
    // "vLLM's DeepGEMM MoE on Hopper"); the profile prices Triton, the later releases' choice: say how to
    // price it.
    const bool fp8_block_experts =
        model.moe_layers() > 0 && model.weights.share(WeightGroup::kRoutedExperts) > 0 &&
        model.weights.quantized_of(WeightGroup::kRoutedExperts).kind == WeightFormatKind::kFp8Block;
    const bool deep_gemm_priced = std::any_of(profile->moe_backend_contiguous_align.begin(),
                                              profile->moe_backend_contiguous_align.end(),
                                              [](const auto& b) { return b.first == "deep_gemm"; });
    const bool padding_priced = profile->param(TimingParam::kMoeContiguousAlign) > 0;  // --profile-set
    if (job.moe_backend.empty() && !padding_priced && fp8_block_experts && deep_gemm_priced)
      std::fprintf(
          stderr,
          "tokenline sim: block-FP8 experts priced as vLLM's Triton MoE (the Hopper default from 0.19); "
          "vLLM 0.12-0.16 run DeepGEMM there (0.12-0.14 below MoE TP 8): --moe-backend deep_gemm prices "
          "it\n");
    if (const double align = profile->param(TimingParam::kMoeContiguousAlign); align > 0)
      std::fprintf(
          stderr,
          "tokenline sim: the fused MoE runs a worst-case row buffer, each local expert's rows padded "
          "to %g (moe_contiguous_align): the moe table prices the routed rows, the roofline the "
          "padding rows' HBM bytes\n",
          align);
    if (!job.moe_a2a_backend.empty()) apply_moe_a2a_backend(*profile, job.moe_a2a_backend);
    if (!job.all2all_backend.empty()) apply_all2all_backend(*profile, job.all2all_backend);
    if (profile->param(TimingParam::kDsaTrtllmBackend) == 1 && model.has_indexer() &&
        !has_dsa_block_rows(*profile, model))
      std::fprintf(stderr,
                   "tokenline sim: %s holds no whole-block rows of the TensorRT-LLM NSA backend for %s "
                   "(dsa_trtllm_backend 1): its DSA parts price the attention\n",
                   job.profile.c_str(), model.name.c_str());
    if (!job.speed_of.empty())
      std::fprintf(stderr, "tokenline sim: %s priced at %.4gx its measured times (the speed probe of %s)\n",
                   job.profile.c_str(), profile->param(TimingParam::kSpeedScale), job.speed_of.c_str());
    options.profile = std::move(profile);
    options.remembered_tokens = kRememberedTokens;
  }
  const EngineBehavior engine = engine_behavior(job, options.profile.get());
  const KvLayout layout = run_kv_layout(&engine, model, job.kv_layout, d.hardware);
  for (const Parallel& p : layouts) {
    options.max_chunk_tokens = chunk_tokens(engine, d.hardware, p);
    d.cost_models.push_back(make_cost_model(model, p, layout, d.hardware, options));
  }
  return d;
}

// *state_max_running: the running requests the state slots allow on one rank (0: no linear layers).
KvConfig size_kv(const SimJob& job, const CostModel& cm, const EngineBehavior& engine,
                 int64_t* state_max_running) {
  const KvCapacity cap = kv_capacity(cm, engine, cm.model.max_context_tokens, job.page_tokens);
  if (cap.weights_fit && cap.pages_per_rank <= 0 && cap.tokens_per_rank > 0) {
    throw InputError("--page-size",
                     "a page no larger than the " + std::to_string(cap.tokens_per_rank) +
                         " tokens of KV a rank of " + cm.parallel.name() + " holds",
                     std::to_string(job.page_tokens) + " tokens");
  }
  if (!cap.weights_fit || cap.pages_per_rank <= 0) {
    auto gb = [](double bytes) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
      return std::string(text);
    };
    std::string found = gb(cap.weight_bytes) + " of weights per GPU";
    if (cap.activation_reserve_bytes > 0) {  // the seed's reserve grows with the chunk: say so
      found += " and " + gb(cap.activation_reserve_bytes) + " of activations for " +
               std::to_string(cm.options.max_chunk_tokens) + "-token chunks";
    }
    // What the user can change, since a default layout was not their choice either: more GPUs, a layout
    // that shards more of the weights, a larger share of the device, a smaller weight format.
    throw InputError("--parallel " + cm.parallel.name(), "a layout whose GPUs hold the weights and some KV",
                     found + " with " + gb(cap.usable_hbm_bytes) +
                         " usable (more GPUs, another --parallel, a larger --mem-fraction" +
                         (cap.activation_reserve_bytes > 0 ? ", a smaller --chunk" : "") +
                         " or a smaller --weights-format would make room)");
  }
  KvConfig kv;
  kv.page_tokens = job.page_tokens;
  kv.total_pages = job.kv_pages > 0 ? job.kv_pages : cap.pages_per_rank;
  const KvPageBytes page = kv_page_bytes(cm, engine.kv_placement, job.page_tokens);
  kv.main_bytes_per_page = page.main;
  kv.indexer_bytes_per_page = page.indexer;
  // Window layers' own pool (engine/core/window_kv.h, docs/layers.md). A step keeps the window of its first
  // query until the next grow, as the real engine does: a prefill chunk's earlier queries read those pages
  // during the step (vLLM v1 `SlidingWindowManager.remove_skipped_blocks` frees by the tokens computed
  // before the step).
  if (cap.window_pages_per_rank > 0)
    kv.window = {.window_tokens = cm.model.window_tokens,
                 .total_pages = cap.window_pages_per_rank,
                 .bytes_per_page = page.window,
                 .hold_step_context = true};
  kv.reservation = reservation_of(engine.admission);
  // A linear-attention model: a state slot per running request (engine/core/state_pool.h), and no prefix
  // cache (its KV pages alone cannot resume a request: docs/layers.md "Prefix caching").
  kv.state_slots = cap.state.slots_per_rank;
  kv.state_bytes_per_slot = cap.state.bytes_per_slot;
  *state_max_running = cap.state.max_running_per_rank();
  kv.prefix_cache = job.prefix_cache && kv.state_slots == 0;
  apply_kv_tier(job.kv_tier, cm, kv);
  return kv;
}

InstanceConfig instance_config(const SimJob& job, const ModelConfig& model, const CostModel& cm) {
  InstanceConfig c;
  c.dp_ranks = cm.parallel.dp_attention;
  c.scheduler.policy = parse_policy(job.policy);
  const EngineBehavior engine = engine_behavior(job, cm.options.profile.get());
  c.assignment =
      job.dp_assign.empty() ? engine.dp_assign : parse_placement_option(job.dp_assign, "--dp-assign");
  c.scheduler.max_batch_tokens = job.max_prefill_tokens > 0
                                     ? std::min(cm.options.max_chunk_tokens, job.max_prefill_tokens)
                                     : cm.options.max_chunk_tokens;
  c.scheduler.mtp_draft_tokens = job.mtp_drafts;
  c.scheduler.max_context_tokens = model.max_context_tokens;
  c.scheduler.mixed_batches = engine.mixed_steps;
  c.plan_ahead = engine.plan_ahead;
  c.scheduler.estimate = estimate_config(engine.ratio.for_dp_attention(cm.parallel.dp_attention));
  int64_t state_max_running = 0;
  c.kv = size_kv(job, cm, engine, &state_max_running);
  c.scheduler.max_running_requests =
      engine.max_running_requests > 0
          ? engine.max_running_requests
          : derived_max_running_requests(c.kv.total_pages * c.kv.page_tokens, model.max_context_tokens);
  // SGLang's init_memory: a linear-attention model runs at most slots // ratio requests (memory.h).
  if (c.kv.state_slots > 0)
    c.scheduler.max_running_requests =
        int32_t(std::clamp<int64_t>(state_max_running, 1, c.scheduler.max_running_requests));
  c.context_hold = ContextHoldConfig{.batch_wait_timeout_iters = engine.batch_wait_timeout_iters,
                                     .batch_wait_max_tokens_ratio = engine.batch_wait_max_tokens_ratio,
                                     .max_num_tokens = c.scheduler.max_batch_tokens,
                                     .adp_balance = engine.attention_dp_balance,
                                     .adp_timeout_iters = engine.attention_dp_timeout_iters,
                                     .adp_batching_wait_iters = engine.attention_dp_batching_wait_iters,
                                     .max_batch_size = c.scheduler.max_running_requests};
  return c;
}

// The run's KV pages, every rank of every instance, within limits::kMaxKvPages before any pool exists.
void check_total_pages(const std::vector<SimConfig::InstanceSpec>& instances, int64_t page_tokens) {
  int64_t pages = 0;
  for (const SimConfig::InstanceSpec& i : instances) {
    pages += int64_t{i.config.dp_ranks} * i.config.kv.total_pages;  // each term <= 2^28 x 2^10 ranks
    if (pages > limits::kMaxKvPages)
      throw InputError("--kv-pages / --page-size / --instances",
                       "at most " + std::to_string(limits::kMaxKvPages) +
                           " KV pages over all ranks (an input limit, README \"Hostile and careless input\")",
                       "more, at " + std::to_string(page_tokens) + "-token pages");
  }
}

// --prefill-mem-fraction / --prefill-max-running, refused where a run has no prefill instances (`why`).
void refuse_prefill_options(const SimJob& job, const std::string& why) {
  if (job.prefill_mem_fraction != 0)
    throw InputError("--prefill-mem-fraction", why, std::to_string(job.prefill_mem_fraction));
  if (job.prefill_max_running != 0)
    throw InputError("--prefill-max-running", why, std::to_string(job.prefill_max_running));
}

// The job as a prefill instance of a PD run sees it: --prefill-mem-fraction and --prefill-max-running in
// place of --mem-fraction and --max-running where given.
SimJob prefill_job(const SimJob& job) {
  SimJob p = job;
  if (job.prefill_mem_fraction != 0) p.mem_fraction = job.prefill_mem_fraction;
  if (job.prefill_max_running != 0) p.max_running = job.prefill_max_running;
  return p;
}

// prefill_instances: with --pd, the first instances that prefill only (0 without --pd).
SimConfig build_config(const SimJob& job, const ModelConfig& model, const Deployment& d,
                       int32_t prefill_instances = 0) {
  SimConfig c;
  c.model_name = model.name;
  c.hardware_name = d.hardware_name;
  c.cluster_name = d.cluster_name;
  c.backend = parse_backend(job.backend);
  // The simgrid backend needs a network: the --cluster, else the hardware's one-node preset ("h200x8").
  if (c.backend == Backend::kSimgrid) {
    c.cluster_source = job.cluster.empty() ? job.hardware + "x8" : job.cluster;
  }
  c.overlap = parse_overlap(job.overlap, "--overlap");
  if (c.overlap != Overlap::kNone && c.backend != Backend::kSimgrid) {
    throw InputError("--overlap", "none with --backend analytic (overlap needs --backend simgrid)",
                     job.overlap);
  }
  c.router = parse_placement_option(job.router, "--router");
  c.router_weights = kv_aware_weights(job, c.router);
  if (job.scheduler_recv_interval < 1 || job.scheduler_recv_interval > 1000000)
    throw InputError("--scheduler-recv-interval", "an integer in [1, 1000000]",
                     std::to_string(job.scheduler_recv_interval));
  if (job.scheduler_recv_interval > 1 && !job.pd.empty())
    throw InputError("--scheduler-recv-interval", "1 with --pd (the PD driver receives every step)",
                     std::to_string(job.scheduler_recv_interval));
  c.scheduler_recv_interval = job.scheduler_recv_interval;
  const SimJob as_prefill = prefill_job(job);
  for (const CostModel& cm : d.cost_models) {
    const bool prefill = static_cast<int32_t>(c.instances.size()) < prefill_instances;
    c.instances.push_back(
        {cm.parallel.name(), instance_config(prefill ? as_prefill : job, model, cm), cm.parallel.gpus()});
    c.parallel_name += (c.parallel_name.empty() ? "" : ",") + cm.parallel.name();
  }
  check_total_pages(c.instances, job.page_tokens);
  const OpProfile* profile = d.cost_models.front().options.profile.get();
  c.feed =
      FeedConfig{.concurrency = job.concurrency,
                 .warmup_requests = job.warmup_requests,
                 .request_latency_s = profile ? profile->param(TimingParam::kRequestLatencyS) : 0.0,
                 .first_token_latency_s = profile ? profile->param(TimingParam::kFirstTokenLatencyS) : 0.0};
  c.output = OutputConfig{.dir = job.out,
                          .trace_detail = parse_detail(job.trace_detail),
                          .progress = job.progress,
                          .wall_time_in_metrics = job.wall_time_in_metrics};
  cli::apply_trace_options(job.trace, c.output);
  c.slo = parse_slo(job.slo);
  c.seed = job.seed;
  c.noise = parse_step_noise(StepNoiseOptions{.expert_skew = job.expert_skew,
                                              .eplb_redundant = job.eplb_redundant,
                                              .mtp_drafts = job.mtp_drafts,
                                              .mtp_accept_mean = job.mtp_accept_mean,
                                              .mtp_accept_std = job.mtp_accept_std},
                             model.routed_experts);
  return c;
}

// What priced the steps, as the summary says it: the source, the share a profile measured, and why.
std::string time_source(const cli::TimeSourceChoice& t, const SimResult& r) {
  const std::string why = " (" + std::string(t.defaulted ? "default: " : "") + t.why + ")";
  if (t.kind == "replay") return "the recorded run (replay)";
  if (t.kind == "ideal") return "the seed's ideal rates" + why;
  if (t.kind == "roofline") return "the roofline" + why;
  char text[320];
  // Collectives over a group the profile did not measure, priced at a smaller group's rows (a lower bound).
  char bounded[96] = "";
  if (r.bounded_share > 0)
    std::snprintf(bounded, sizeof bounded,
                  " (%.1f%% of step time: collectives bounded by a smaller group's rows)",
                  100.0 * r.bounded_share);
  if (t.kind == "transferred") {
    std::snprintf(text, sizeof text,
                  "transferred from %s: its engine and step terms, %.1f%% of step time at its kernels' "
                  "measured efficiency over the roofline%s, the rest roofline",
                  t.profile.substr(t.profile.find(':') + 1).c_str(), 100.0 * r.profile_coverage, bounded);
    return text + why;
  }
  std::snprintf(text, sizeof text, "profile %s: %.1f%% of step time measured%s, the rest roofline",
                t.profile.c_str(), 100.0 * r.profile_coverage, bounded);
  return text + why;
}

// The run's one-line summary, and where its step times came from.
void print_summary(const SimConfig& c, const Resolved& resolved, const SimResult& r) {
  const double ratio = r.wall_s > 0 ? r.simulated_s / r.wall_s : 0.0;
  std::fprintf(
      stderr,
      "tokenline sim: %lld arrived, %lld completed, %lld rejected, %lld in flight, %lld preemptions, "
      "prefix hit %.1f%%; simulated %.3f s in %.3f s wall (%.0fx); outputs in %s\n",
      static_cast<long long>(r.arrived), static_cast<long long>(r.completed),
      static_cast<long long>(r.rejected), static_cast<long long>(r.in_flight),
      static_cast<long long>(r.preemptions), 100.0 * r.prefix_hit_rate, r.simulated_s, r.wall_s, ratio,
      c.output.dir.c_str());
  std::fprintf(stderr, "tokenline sim: step times from %s\n", time_source(resolved.time_source, r).c_str());
  if (r.in_flight > 0) {
    std::fprintf(
        stderr,
        "tokenline sim: warning: %lld requests neither completed nor were rejected (an instance could "
        "not schedule them); arrived != completed + rejected\n",
        static_cast<long long>(r.in_flight));
  }
  if (r.skipped_lines > 0) {
    std::fprintf(stderr, "tokenline sim: skipped %lld malformed workload lines (--skip-bad-lines)\n",
                 static_cast<long long>(r.skipped_lines));
  }
}

// metrics.json's "configuration" block: the run with every default resolved, and the arguments that
// reproduce it (`tokenline <arguments> --out DIR` writes the same bytes, the configuration included).
std::string configuration_json(const SimJob& job, const SimConfig& c, const Deployment& d,
                               const WorkloadSpec& w, const Resolved& r) {
  using Json = nlohmann::ordered_json;
  const EngineBehavior engine = engine_behavior(job, d.cost_models.front().options.profile.get());
  Json j;
  j["arguments"] = job.arguments;
  j["tokenline_version"] = TOKENLINE_VERSION;
  j["model"] = c.model_name;
  if (!job.weights_format.empty()) j["weights_format"] = job.weights_format;
  j["hardware"] = c.hardware_name;
  if (!c.cluster_name.empty()) j["cluster"] = c.cluster_name;
  int32_t gpus = 0;
  for (const CostModel& cm : d.cost_models) gpus += cm.parallel.gpus();
  j["gpus"] = gpus;
  j["layout"] = c.parallel_name;
  j["pd"] = job.pd;
  j["router"] = std::string(to_string(c.router));
  if (c.router == PlacementPolicy::kKvAware)
    j["router_weights"] = {{"kv_overlap_score_weight", c.router_weights.overlap_score_weight},
                           {"router_temperature", c.router_weights.temperature}};
  j["backend"] = job.backend;
  j["overlap"] = job.overlap;
  j["profile"] = job.profile;
  j["profile_set"] = job.profile_set;
  if (!job.moe_runner_backend.empty()) j["moe_runner_backend"] = job.moe_runner_backend;
  if (!job.nsa_prefill_backend.empty()) j["nsa_prefill_backend"] = job.nsa_prefill_backend;
  if (!job.nsa_decode_backend.empty()) j["nsa_decode_backend"] = job.nsa_decode_backend;
  if (!job.moe_backend.empty()) j["moe_backend"] = job.moe_backend;
  if (!job.moe_a2a_backend.empty()) j["moe_a2a_backend"] = job.moe_a2a_backend;
  if (!job.all2all_backend.empty()) j["all2all_backend"] = job.all2all_backend;
  if (job.scheduler_recv_interval > 1) j["scheduler_recv_interval"] = job.scheduler_recv_interval;
  j["time_source"] = {{"kind", r.time_source.kind},
                      {"profile", r.time_source.profile},
                      {"defaulted", r.time_source.defaulted},
                      {"why", r.time_source.why}};
  j["engine"] = {{"admission", std::string(to_string(engine.admission))},
                 {"mixed_steps", engine.mixed_steps},
                 {"plan_ahead", engine.plan_ahead},
                 {"kv_placement", std::string(to_string(engine.kv_placement))},
                 {"mem_fraction", engine.mem_fraction_static}};
  if (job.swa_full_tokens_ratio != 0) j["engine"]["swa_full_tokens_ratio"] = engine.swa_full_tokens_ratio;
  if (engine.batch_wait_timeout_iters > 0 || engine.batch_wait_max_tokens_ratio > 0)
    j["engine"]["batch_wait"] = {{"timeout_iters", engine.batch_wait_timeout_iters},
                                 {"max_tokens_ratio", engine.batch_wait_max_tokens_ratio}};
  if (engine.attention_dp_balance)
    j["engine"]["attention_dp_balance"] = {{"timeout_iters", engine.attention_dp_timeout_iters},
                                           {"batching_wait_iters", engine.attention_dp_batching_wait_iters}};
  Json instances = Json::array();
  for (const SimConfig::InstanceSpec& i : c.instances) {
    const InstanceConfig& ic = i.config;
    instances.push_back({{"layout", i.parallel_name},
                         {"role", std::string(to_string(ic.scheduler.role))},
                         {"step_tokens_per_rank", ic.scheduler.max_batch_tokens},
                         {"max_running_requests_per_rank", ic.scheduler.max_running_requests},
                         {"kv_pages_per_rank", ic.kv.total_pages},
                         {"page_tokens", ic.kv.page_tokens},
                         {"reservation", std::string(to_string(ic.kv.reservation))},
                         {"prefix_cache", ic.kv.prefix_cache},
                         {"policy", std::string(to_string(ic.scheduler.policy))},
                         {"dp_assign", std::string(to_string(ic.assignment))}});
    if (ic.kv.host.pages > 0) {  // only with a host tier: outputs without one keep their bytes
      instances.back()["host_tier"] = {{"pages_per_rank", ic.kv.host.pages},
                                       {"write_policy", std::string(to_string(ic.kv.host.write_policy))},
                                       {"load_overlap", job.kv_tier.load_overlap}};
    }
  }
  j["instances"] = instances;
  j["workload"] = c.workload_name;
  j["time_scale"] = w.options.window.time_scale;
  j["rate_requests_per_s"] = job.rate;
  j["concurrency"] = job.concurrency;
  j["seed"] = job.seed;
  j["slo_ttft_ms"] = c.slo.ttft_s * 1e3;
  j["slo_tpot_ms"] = c.slo.tpot_s * 1e3;
  j["mtp_drafts"] = job.mtp_drafts;
  j["defaults"] = r.defaults;
  return j.dump();
}

cli::SummaryContext summary_context(const SimJob& job, const SimConfig& config, const Deployment& d,
                                    const Resolved& resolved, const SimResult& r) {
  cli::SummaryContext c;
  c.command = "sim";
  c.time_source = time_source(resolved.time_source, r);
  const CostModel& first = d.cost_models.front();
  c.accuracy = accuracy_note(shipped_accuracy_table(),
                             {.hardware = first.hardware.name,
                              .engine = engine_behavior(job, first.options.profile.get()).engine,
                              .kind = resolved.time_source.kind,
                              .profile = resolved.time_source.profile,
                              .model_type = first.model.hf_model_type,
                              .model_name = first.model.name,
                              .disaggregated = !job.pd.empty()})
                   .lines;
  c.defaults = resolved.defaults;
  for (const CostModel& cm : d.cost_models) c.gpus += cm.parallel.gpus();
  if (job.workload.empty() && job.isl == 0)
    c.defaults.push_back("workload: " + config.workload_name + " (no --workload)");
  c.offered_rate_rps = job.rate;
  c.native_rate_rps = resolved.native_rate_rps;
  c.json = job.json;
  return c;
}

// Runs a simulation into its claimed --out and prints its summary (exit code 0); bad input propagates (exit
// 2), any other failure is one message (exit 1). On any failure `outputs` puts the earlier run's back.
int run_reported(const SimJob& job, const SimConfig& config, const Deployment& d, const Resolved& resolved,
                 RunOutputs& outputs, const std::function<SimResult()>& simulate) {
  try {
    const SimResult result = simulate();
    print_summary(config, resolved, result);
    outputs.commit();
    cli::print_run_summary(config.output.dir, summary_context(job, config, d, resolved, result));
    return 0;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenline sim: %s\n", e.what());
    return 1;
  }
}

// Autoscaled PD pools (--pd-max): judged here, then the run holds each pool's most instances of the one
// layout (prefill slots first), --pd's counts of them live at the start (kept in the pools' policies).
void scale_pd_pools(SimJob& job, PdConfig& pd) {
  if (!job.scale.pd_autoscaled()) return;
  if (job.backend != "analytic")
    throw InputError("--pd-max", "--backend analytic (instances come and go; a platform's GPUs do not)",
                     "--backend " + job.backend);
  if (job.parallel.find(',') != std::string::npos)
    throw InputError("--pd-max", "one --parallel layout for every instance", job.parallel);
  const cli::PdScaleBounds b = cli::pd_scale_bounds(job.scale, pd.prefill_instances, pd.decode_instances);
  pd.prefill_scale.max_instances = b.max_prefill;  // marks the pools autoscaled; apply_scale_options fills
  pd.decode_scale.max_instances = b.max_decode;    // the rest of both policies
  pd.prefill_scale.initial_instances = pd.prefill_instances;
  pd.decode_scale.initial_instances = pd.decode_instances;
  pd.prefill_instances = b.max_prefill;
  pd.decode_instances = b.max_decode;
  job.instances = b.max_prefill + b.max_decode;
}

// Autoscaling (--max-instances): judged here, then the run holds --max-instances slots of the one layout,
// --instances of them live at the start. Returns the starting count.
int32_t scale_fleet(SimJob& job, PdConfig& pd) {
  cli::check_scale_options(job.scale, job.instances, !job.slo.empty());
  if (job.scale.pd_autoscaled() && !pd.enabled())
    throw InputError("--pd-max", "--pd xPyD (the pools at the start)", job.scale.pd_max);
  scale_pd_pools(job, pd);
  if (!job.scale.autoscaled()) return job.instances;
  if (pd.enabled()) throw InputError("--max-instances", "no --pd (--pd-max scales the PD pools)", job.pd);
  if (job.backend != "analytic")
    throw InputError("--max-instances",
                     "--backend analytic (instances come and go; a platform's GPUs do not)",
                     "--backend " + job.backend);
  if (job.parallel.find(',') != std::string::npos)
    throw InputError("--max-instances", "one --parallel layout for every instance", job.parallel);
  const int32_t initial = job.instances;
  job.instances = job.scale.max_instances;
  return initial;
}

// The cost block's price (cli/scale_options.h cost_config), and the line the run lists among its defaults
// where it took the hardware's list price unasked.
CostConfig job_cost(const SimJob& job, const std::string& hardware, Resolved& resolved) {
  std::string price_default;
  CostConfig cost = cli::cost_config(job.scale, hardware, &price_default);
  if (!price_default.empty()) resolved.defaults.push_back(price_default);
  return cost;
}

// The cost block's price, and with autoscaling its policy and each new instance's cold start: the weights
// a GPU holds over the storage link, then the engine's start-up.
// Autoscaled PD pools: each pool's policy from the same settings and cold start.
void apply_scale_options(const SimJob& job, int32_t initial_instances, const Deployment& d, SimConfig& c,
                         PdConfig& pd, Resolved& resolved) {
  c.cost = job_cost(job, d.hardware_name, resolved);
  if (!job.scale.autoscaled() && !job.scale.pd_autoscaled()) return;
  const CostModel& cm = d.cost_models.front();
  const KvCapacity cap = kv_capacity(cm, engine_behavior(job, cm.options.profile.get()),
                                     cm.model.max_context_tokens, job.page_tokens);
  const double nic = d.hardware.ib_bw * d.hardware.nics_per_gpu;
  if (job.scale.autoscaled()) {
    c.autoscale = cli::autoscale_config(job.scale, initial_instances, cap.weight_bytes, nic);
    return;
  }
  const cli::PdScaleBounds b =
      cli::pd_scale_bounds(job.scale, pd.prefill_scale.initial_instances, pd.decode_scale.initial_instances);
  pd.prefill_scale =
      cli::pd_autoscale_config(job.scale, b, true, pd.prefill_scale.initial_instances, cap.weight_bytes, nic);
  pd.decode_scale =
      cli::pd_autoscale_config(job.scale, b, false, pd.decode_scale.initial_instances, cap.weight_bytes, nic);
}

}  // namespace

int run_sim_job(const SimJob& given) {
  // Every flag and the workload are judged before --out is touched (RunOutputs, last).
  check_numbers(given);
  cli::check_preset_flags({.model = given.model,
                           .hardware = given.hardware,
                           .cluster = given.cluster,
                           .profile = given.profile,
                           .engine = given.engine});
  PdConfig pd = parse_pd(given.pd, given.pd_link, given.pd_transfer);
  SimJob job = given;
  Resolved resolved;
  if (pd.enabled()) {
    const int32_t pd_instances = pd.prefill_instances + pd.decode_instances;
    if (given.instances != 1 && given.instances != pd_instances)
      throw InputError(
          "--instances",
          "1 or " + std::to_string(pd_instances) + " with --pd " + given.pd + " (--pd sets the instances)",
          std::to_string(given.instances));
    job.instances = pd_instances;
    require_at_most(job.instances, limits::kMaxInstances, "--pd (instances)");
  } else {
    refuse_prefill_options(given, "only with --pd (the prefill instances')");
  }
  resolve_hardware(job, resolved);
  const ModelConfig model = load_model(job.model, job.weights_format);
  cli::check_mtp_layers(job.mtp_drafts, model);
  resolve_layout(job, model, resolved);
  const int32_t initial_instances = scale_fleet(job, pd);
  require_at_most(job.instances, limits::kMaxInstances, "--instances");
  resolve_time_source(job, model, resolved);
  const Deployment deployment = load_deployment(job, model, parse_layouts(job, model), resolved);
  const WorkloadSpec workload = workload_spec(job, &resolved);
  SimConfig config = build_config(job, model, deployment, pd.prefill_instances);
  config.workload_name = describe_workload(workload);
  apply_scale_options(job, initial_instances, deployment, config, pd, resolved);
  if (!job.skip_bad_lines) prevalidate_workload(workload);  // malformed input stops the run before it starts
  if (pd.enabled()) {
    apply_pd_roles(config, pd);
    apply_pd_path_costs(config, pd, deployment.cost_models.front().options.profile.get());
    check_pd_capacity(config, pd, *open_arrivals(workload));
  }
  config.output.configuration_json = configuration_json(job, config, deployment, workload, resolved);
  RunOutputs outputs(job.out);
  std::unique_ptr<ArrivalSource> source = open_arrivals(workload);
  return run_reported(job, config, deployment, resolved, outputs, [&] {
    return pd.enabled() ? run_pd_simulation(config, pd, deployment.cost_models, *source)
                        : run_simulation(config, deployment.cost_models, *source);
  });
}

int run_replay_job(const SimJob& given) {
  if (!given.pd.empty())
    throw InputError("--pd", "no --pd with --backend replay (PD runs the analytic backend)", given.pd);
  if (given.scale.autoscaled())
    throw InputError("--max-instances", "no autoscaling with --backend replay (it replays a fixed fleet)",
                     std::to_string(given.scale.max_instances));
  if (given.scale.pd_autoscaled())
    throw InputError("--pd-max", "no autoscaling with --backend replay (it replays a fixed fleet)",
                     given.scale.pd_max);
  cli::check_scale_options(given.scale, given.instances, !given.slo.empty());
  refuse_prefill_options(given, "only with --pd, so not with --backend replay");
  const std::string path = replay_trace_path(given.backend);
  check_numbers(given);
  cli::check_preset_flags({.model = given.model,
                           .hardware = given.hardware,
                           .cluster = given.cluster,
                           .profile = given.profile,
                           .engine = given.engine});
  // tokenline run serves requests open loop; MTP drafts (--mtp as the run's) take the run's acceptances.
  if (given.concurrency > 0)
    throw InputError("--concurrency", "0 (open loop) with --backend replay",
                     std::to_string(given.concurrency));
  SimJob job = given;
  Resolved resolved;
  resolve_hardware(job, resolved);
  const ModelConfig model = load_model(job.model, job.weights_format);
  cli::check_mtp_layers(job.mtp_drafts, model);
  resolve_layout(job, model, resolved);
  resolve_time_source(job, model, resolved);
  const Deployment deployment = load_deployment(job, model, parse_layouts(job, model), resolved);
  const WorkloadSpec workload = workload_spec(job, &resolved);
  SimConfig config = build_config(job, model, deployment);
  config.workload_name = describe_workload(workload);
  config.cost = job_cost(job, deployment.hardware_name, resolved);
  const RecordedRun recorded = read_recorded_run(path);
  if (recorded.instances.size() != config.instances.size()) {
    throw InputError(
        "--backend " + job.backend,
        "a trace with " + std::to_string(config.instances.size()) + " instance(s) (--parallel, --instances)",
        std::to_string(recorded.instances.size()));
  }
  if (!job.skip_bad_lines) prevalidate_workload(workload);
  config.output.configuration_json = configuration_json(job, config, deployment, workload, resolved);
  RunOutputs outputs(job.out);
  std::unique_ptr<ArrivalSource> source = open_arrivals(workload);
  return run_reported(job, config, deployment, resolved, outputs, [&] {
    return run_replay_simulation(config, deployment.cost_models, *source, recorded);
  });
}

}  // namespace tokenline
