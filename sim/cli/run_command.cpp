// `tokenline run`: replays a workload in wall time through the real engine (engine/runtime's model runner
// on the CPU reference kernels) over the same core as `tokenline sim`, and writes the same three outputs
// (metrics.json, requests.csv, trace.json with the ledger's op names) through sim/'s recorder.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>

#include "common/input_error.h"
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
  int32_t dp_ranks = 1;                // attention data parallelism (ranks run one after another)
  std::string reservation = "whole";
  std::string policy = "fcfs";
  int32_t max_running = 1024;
  bool prefix_cache = true;
  std::string trace_detail = "op";
  int64_t max_requests = 0;
  double time_scale = 1.0;
};

void check_backend(const std::string& backend) {
  if (backend == "cpu") return;
  if (backend != "cuda") throw InputError("--backend", "cpu or cuda", "'" + backend + "'");
  const int32_t devices = runtime_cuda_devices();
  if (devices < 0)
    throw InputError("--backend cuda", "a build with CUDA (nvcc at configure time)", "a CPU-only build");
  if (devices == 0)
    throw InputError("--backend cuda", "a CUDA device", "none (no GPU or driver on this machine)");
  throw InputError("--backend cuda", "a runner with CUDA kernels wired in",
                   "only the CPU runner so far (the CUDA kernels are tested on their own in kernels/)");
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

InstanceConfig instance_config(const RunJob& job, const ModelShape& shape) {
  InstanceConfig c;
  c.dp_ranks = job.dp_ranks;
  c.assignment = RankAssignment::kRoundRobin;
  c.scheduler.policy = parse_policy(job.policy);
  c.scheduler.max_batch_tokens = job.chunk_tokens;
  c.scheduler.max_running_requests = job.max_running;
  c.scheduler.max_context_tokens = shape.max_context_tokens;
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

// The --parallel a replay names: one rank is "tp1", attention DP over N ranks "dpN".
std::string parallel_name(const RunJob& job) {
  return job.dp_ranks > 1 ? "dp" + std::to_string(job.dp_ranks) : "tp1";
}

SimConfig recorder_config(const RunJob& job, const InstanceConfig& instance) {
  SimConfig c;
  c.model_name = job.model;
  c.hardware_name = "cpu";
  c.parallel_name = parallel_name(job);
  c.instances.push_back({c.parallel_name, instance});
  c.output = OutputConfig{.dir = job.out, .trace_detail = parse_detail(job.trace_detail)};
  c.seed = job.seed;
  return c;
}

RunInfo run_info(const RunJob& job, const ModelShape& shape, const WorkloadSpec& workload, double end_s,
                 double wall_s) {
  RunInfo info;
  info.mode = "real";
  info.backend = job.backend;
  info.model = shape.name;
  info.hardware = "cpu";
  info.parallelism = parallel_name(job);
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
  check_backend(job.backend);
  require_positive(job.chunk_tokens, "--chunk");
  require_positive(job.page_tokens, "--page-size");
  require_positive(job.kv_pages, "--kv-pages");
  require_positive(job.max_running, "--max-running");
  require_positive(job.dp_ranks, "--dp");
  if (job.out.empty()) throw InputError("--out", "an output directory", "nothing");
  const ModelShape shape = load_model_shape(job.model);
  ModelWeights weights =
      job.weights.empty() ? ModelWeights::random(shape, job.seed) : ModelWeights::load(shape, job.weights);
  const WorkloadSpec workload = workload_spec(job);
  const std::vector<TimedRequest> arrivals = read_arrivals(workload, shape);
  const InstanceConfig instance_cfg = instance_config(job, shape);
  require_writable_directory(job.out);
  const SimConfig config = recorder_config(job, instance_cfg);

  SteadyClock clock;
  ModelRunner runner(shape, std::move(weights),
                     RunnerConfig{.dp_ranks = job.dp_ranks,
                                  .total_pages = job.kv_pages,
                                  .page_tokens = static_cast<int32_t>(job.page_tokens),
                                  .op_detail = config.output.trace_detail == TraceDetail::kOp},
                     clock);
  Instance instance(instance_cfg);
  Recorder recorder(config);
  recorder.describe_instance(0, config.parallel_name, job.dp_ranks, job.kv_pages);
  RecorderObserver observer(recorder);
  const EngineLoopResult result = run_engine_loop(instance, runner, clock, arrivals, job.seed, observer);

  const RunInfo info = run_info(job, shape, workload, result.end_s, clock.now_s());
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
  cmd->add_option("--dp", job->dp_ranks, "attention-DP ranks (round-robin; replay with --parallel dpN)")
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
