// `tokenline run`: replays a workload in wall time through the real engine (engine/runtime's model runner
// on the CPU reference kernels, or the CUDA kernels on one GPU) over the same core as `tokenline sim`, and
// writes the same three outputs (metrics.json, requests.csv, trace.json with the ledger's op names)
// through sim/'s recorder. --parallel splits the model over in-process ranks (threads) as a GPU
// deployment would: attention TP groups, attention DP groups, expert parallelism.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>

#include "common/input_error.h"
#include "engine/model/parallel.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/cuda_devices.h"
#include "engine/runtime/engine_loop.h"
#include "engine/runtime/model_runner.h"
#include "sim/cli/command.h"
#include "sim/recorder.h"
#include "sim/workload_arrivals.h"
#include "traces/output_file.h"

namespace tokenline::cli {
namespace {

constexpr int64_t kDefaultKvPages =
    256;  // 16k tokens at 64-token pages: 12.8 MB at glm-5.3-tiny's 784 B/token

struct RunJob {
  std::string backend = "cpu";
  std::string model = "glm-5.3-tiny";
  std::string workload;
  std::string weights;  // safetensors path; empty: seeded random weights
  std::string out;
  uint64_t seed = 0;
  // Scheduler defaults are tokenline sim's, so a replay needs only --model, --parallel tp1 and --kv-pages.
  int64_t chunk_tokens = 32768;
  int64_t page_tokens = 64;
  int64_t kv_pages = kDefaultKvPages;  // per rank
  std::string parallel = "tp1";        // tpN, dpN, epN parts as for tokenline sim
  int32_t mtp_drafts = 0;              // MTP draft tokens per decode step (0 or 1)
  std::string reservation = "whole";
  std::string policy = "fcfs";
  int32_t max_running = 1024;
  bool prefix_cache = true;
  std::string trace_detail = "op";
  int64_t max_requests = 0;
  double time_scale = 1.0;
};

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

RunnerConfig runner_config(const RunJob& job, const ModelShape& shape, const Parallel& parallel,
                           const KernelSet* kernels, TraceDetail detail) {
  RunnerConfig c{.dp_ranks = parallel.dp_attention,
                 .tp = parallel.tp,
                 .ep = parallel.ep,
                 .total_pages = job.kv_pages,
                 .page_tokens = static_cast<int32_t>(job.page_tokens),
                 .mtp_draft_tokens = job.mtp_drafts,
                 .op_detail = detail == TraceDetail::kOp,
                 .kernels = kernels};
  const std::string why = runner_layout_error(shape, c);
  if (!why.empty()) throw InputError("--parallel", why + " for " + shape.name, "'" + parallel.name() + "'");
  return c;
}

void require_positive(int64_t value, const char* option) {
  if (value <= 0) throw InputError(option, "a positive integer", std::to_string(value));
}

ReservationPolicy parse_reservation(const std::string& v) {
  if (v == "whole") return ReservationPolicy::kWholeRequest;
  if (v == "incremental") return ReservationPolicy::kIncremental;
  throw InputError("--reservation", "whole or incremental", "'" + v + "'");
}

SchedulePolicy parse_policy(const std::string& v) {
  if (v == "fcfs") return SchedulePolicy::kFcfs;
  if (v == "lpm") return SchedulePolicy::kLongestPrefixMatch;
  if (v == "priority") return SchedulePolicy::kPriority;
  throw InputError("--policy", "fcfs, lpm or priority", "'" + v + "'");
}

TraceDetail parse_detail(const std::string& v) {
  if (v == "step") return TraceDetail::kStep;
  if (v == "op") return TraceDetail::kOp;
  throw InputError("--trace-detail", "step or op", "'" + v + "'");
}

InstanceConfig instance_config(const RunJob& job, const ModelShape& shape, const Parallel& parallel) {
  InstanceConfig c;
  c.dp_ranks = parallel.dp_attention;
  c.assignment = RankAssignment::kRoundRobin;
  c.scheduler.policy = parse_policy(job.policy);
  c.scheduler.max_batch_tokens = job.chunk_tokens;
  c.scheduler.max_running_requests = job.max_running;
  c.scheduler.max_context_tokens = shape.max_context_tokens;
  c.scheduler.mtp_draft_tokens = job.mtp_drafts;
  c.kv.page_tokens = job.page_tokens;
  c.kv.total_pages = job.kv_pages;
  c.kv.main_bytes_per_page = shape.kv_bytes_per_token * job.page_tokens;
  c.kv.indexer_bytes_per_page = shape.indexer_bytes_per_token * job.page_tokens;
  c.kv.reservation = parse_reservation(job.reservation);
  c.kv.prefix_cache = job.prefix_cache;
  return c;
}

WorkloadSpec workload_spec(const RunJob& job) {
  WorkloadSpec w;
  w.spec = job.workload;
  w.options.seed = job.seed;
  w.options.window.time_scale = job.time_scale;
  if (job.max_requests > 0) w.options.window.max_requests = job.max_requests;
  check_window(w.options.window);
  return w;
}

std::vector<TimedRequest> read_arrivals(const WorkloadSpec& spec, const ModelShape& shape) {
  prevalidate_workload(spec);
  std::unique_ptr<ArrivalSource> source = open_arrivals(spec);
  std::vector<TimedRequest> arrivals;
  Arrival a;
  while (source->next(a)) {
    for (int32_t id : a.spec.token_ids) {
      if (id < 0 || id >= shape.vocab)
        throw InputError("--workload request " + std::to_string(a.spec.id), "token ids below the vocab",
                         std::to_string(id));
    }
    arrivals.push_back(TimedRequest{a.trace_time_s, std::move(a.spec)});
  }
  return arrivals;
}

// Forwards the engine loop's events to the recorder (one instance).
class RecorderObserver final : public EngineObserver {
 public:
  explicit RecorderObserver(Recorder& recorder) : recorder_(recorder) {}
  void on_arrival(RequestId id, double now_s) override { recorder_.on_arrival(0, id, now_s); }
  void on_preemption(RequestId id, double now_s) override { recorder_.on_preemption(0, id, now_s); }
  void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters) override {
    recorder_.on_step(0, plan, outcome, nullptr, start_s, counters);
  }
  void on_record(const RequestRecord& record) override { recorder_.on_record(record, 0); }

 private:
  Recorder& recorder_;
};

SimConfig recorder_config(const RunJob& job, const InstanceConfig& instance, const Parallel& parallel) {
  SimConfig c;
  c.model_name = job.model;
  c.hardware_name = job.backend;
  c.parallel_name = parallel.name();
  c.instances.push_back({c.parallel_name, instance});
  c.output = OutputConfig{.dir = job.out, .trace_detail = parse_detail(job.trace_detail)};
  c.seed = job.seed;
  return c;
}

RunInfo run_info(const RunJob& job, const ModelShape& shape, const WorkloadSpec& workload,
                 const Parallel& parallel, double end_s, double wall_s) {
  RunInfo info;
  info.mode = "real";
  info.backend = job.backend;
  info.model = shape.name;
  info.hardware = job.backend;
  info.parallelism = parallel.name();
  info.router = "round-robin";
  info.workload = describe_workload(workload);
  info.seed = job.seed;
  info.simulated_s = end_s;
  info.wall_s = wall_s;
  return info;
}

void print_summary(const Metrics& m, const EngineLoopResult& result, const std::string& out) {
  std::fprintf(stderr,
               "tokenline run: %lld arrived, %lld completed, %lld rejected, %lld preemptions, %lld steps in "
               "%.3f s; outputs in %s\n",
               static_cast<long long>(m.arrived()), static_cast<long long>(m.completed()),
               static_cast<long long>(m.rejected()), static_cast<long long>(m.preemptions()),
               static_cast<long long>(result.steps), result.end_s, out.c_str());
  const int64_t in_flight = m.arrived() - m.completed() - m.rejected();
  if (in_flight > 0) {
    std::fprintf(
        stderr,
        "tokenline run: warning: %lld requests neither completed nor were rejected (the instance could "
        "not schedule them)\n",
        static_cast<long long>(in_flight));
  }
}

int run_job(const RunJob& job) {
  const KernelSet* kernels = backend_kernels(job.backend);
  require_positive(job.chunk_tokens, "--chunk");
  require_positive(job.page_tokens, "--page-size");
  require_positive(job.kv_pages, "--kv-pages");
  require_positive(job.max_running, "--max-running");
  if (job.out.empty()) throw InputError("--out", "an output directory", "nothing");
  const Parallel parallel = parse_parallel(job.parallel, "--parallel");
  const ModelShape shape = load_model_shape(job.model);
  if (job.mtp_drafts < 0 || job.mtp_drafts > 1)
    throw InputError("--mtp", "0 or 1 (the MTP layer drafts one token per decode step)",
                     std::to_string(job.mtp_drafts));
  if (job.mtp_drafts > 0 && shape.mtp_layers == 0)
    throw InputError("--mtp", "a model with an MTP layer (num_nextn_predict_layers)",
                     "'" + shape.name + "' without one");
  const TraceDetail detail = parse_detail(job.trace_detail);
  const RunnerConfig runner_cfg = runner_config(job, shape, parallel, kernels, detail);
  const WorkloadSpec workload = workload_spec(job);
  const std::vector<TimedRequest> arrivals = read_arrivals(workload, shape);
  const InstanceConfig instance_cfg = instance_config(job, shape, parallel);
  require_writable_directory(job.out);
  const SimConfig config = recorder_config(job, instance_cfg, parallel);

  SteadyClock clock;
  ModelRunner runner(
      shape,
      job.weights.empty() ? ModelWeights::random(shape, job.seed) : ModelWeights::load(shape, job.weights),
      runner_cfg, clock);
  Instance instance(instance_cfg);
  Recorder recorder(config);
  recorder.describe_instance(0, config.parallel_name, parallel.dp_attention, job.kv_pages);
  RecorderObserver observer(recorder);
  const EngineLoopResult result = run_engine_loop(instance, runner, clock, arrivals, job.seed, observer);

  const RunInfo info = run_info(job, shape, workload, parallel, result.end_s, clock.now_s());
  std::string why;
  if (!recorder.finish(info, &why)) {
    std::fprintf(stderr, "tokenline run: %s\n", why.c_str());
    return 1;
  }
  print_summary(recorder.metrics(), result, job.out);
  return 0;
}

void add_run(CLI::App& app) {
  auto job = std::make_shared<RunJob>();
  CLI::App* cmd = app.add_subcommand("run", "run a workload in wall time on the real engine");
  cmd->add_option("--backend", job->backend, "cpu | cuda")->capture_default_str();
  cmd->add_option("--model", job->model, "model preset or config.json (an MLA + DSA model)")
      ->capture_default_str();
  cmd->add_option("--workload", job->workload, "a trace file or synthetic:<spec> (as for tokenline sim)");
  cmd->add_option("--weights", job->weights, "safetensors checkpoint (default: random weights from --seed)");
  cmd->add_option("--out", job->out, "output directory (metrics.json, requests.csv, trace.json)")->required();
  cmd->add_option("--seed", job->seed, "seed for weights, synthetic workloads and prompt tokens")
      ->capture_default_str();
  cmd->add_option("--chunk", job->chunk_tokens, "token budget per step = prefill chunk")
      ->capture_default_str();
  cmd->add_option("--page-size", job->page_tokens, "KV page size in tokens")->capture_default_str();
  cmd->add_option("--kv-pages", job->kv_pages, "KV pages per rank")->capture_default_str();
  cmd->add_option(
         "--parallel", job->parallel,
         "tpN, dpN, epN parts, e.g. tp2, dp2-ep2, dp2-tp2-ep4 (ep: 1 or every rank; threads as ranks)")
      ->capture_default_str();
  cmd->add_option("--mtp", job->mtp_drafts, "MTP draft tokens per decode step: 0 or 1 (greedy, lossless)")
      ->capture_default_str();
  cmd->add_option("--reservation", job->reservation, "whole | incremental")->capture_default_str();
  cmd->add_option("--policy", job->policy, "fcfs | lpm | priority")->capture_default_str();
  cmd->add_option("--max-running", job->max_running, "running requests")->capture_default_str();
  cmd->add_flag("!--no-prefix-cache", job->prefix_cache, "disable the radix prefix cache");
  cmd->add_option("--trace-detail", job->trace_detail, "step | op")->capture_default_str();
  cmd->add_option("--max-requests", job->max_requests, "stop after N requests (0: all)");
  cmd->add_option("--time-scale", job->time_scale, "multiply arrival times")->capture_default_str();
  cmd->callback([job] {
    const int rc = run_job(*job);
    if (rc != 0) std::exit(rc);
  });
}

const CommandRegistration kRegistration("run", add_run);

}  // namespace
}  // namespace tokenline::cli
