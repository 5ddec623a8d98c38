// `tokenline run`: replays a workload in wall time through the real engine (engine/runtime's model runner
// on the CPU reference kernels, or the CUDA kernels on one GPU) over the same core as `tokenline sim`, and
// writes the same three outputs (metrics.json, requests.csv, trace.json with the ledger's op names)
// through traces/'s recorder. --parallel splits the model over in-process ranks (threads) as a GPU
// deployment would: attention TP groups, attention DP groups, expert parallelism.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/engine_job.h"
#include "cli/run_summary.h"
#include "cli/sim_options.h"
#include "common/input_error.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/op_profiler.h"
#include "engine/runtime/request_feed.h"
#include "run/workload_arrivals.h"
#include "traces/output_file.h"

namespace tokenline::cli {
namespace {

struct RunJob {
  EngineJob engine;
  std::string workload;
  int64_t max_requests = 0;
  double time_scale = 1.0;
  bool speed_probe = true;  // time the engine's speed probe before and after the run (metrics.json)
  bool json = false;        // --json: the summary as one JSON object on stdout
  std::vector<std::string> arguments;  // as given, --out left out (cli/sim_options.h given_arguments)
};

WorkloadSpec workload_spec(const RunJob& job) {
  WorkloadSpec w;
  w.spec = job.workload;
  w.options.seed = job.engine.seed;
  w.options.window.time_scale = job.time_scale;
  if (job.max_requests > 0) w.options.window.max_requests = job.max_requests;
  check_window(w.options.window);
  return w;
}

std::vector<TimedRequest> read_arrivals(const WorkloadSpec& spec, const ModelShape& shape) {
  prevalidate_workload(spec);
  std::unique_ptr<ArrivalSource> source = open_arrivals(spec);
  std::vector<TimedRequest> arrivals;
  TimedRequest a;
  while (source->next(a)) {
    for (int32_t id : a.spec.token_ids) {
      if (id < 0 || id >= shape.vocab)
        throw InputError("--workload request " + std::to_string(a.spec.id), "token ids below the vocab",
                         std::to_string(id));
    }
    arrivals.push_back(std::move(a));
  }
  return arrivals;
}

// metrics.json's "configuration" block: the run's resolved engine and the arguments that reproduce it.
std::string configuration_json(const RunJob& job, const EngineSetup& setup, double time_scale) {
  const InstanceConfig& ic = setup.instance;
  nlohmann::ordered_json j = {{"arguments", job.arguments},
                              {"tokenline_version", TOKENLINE_VERSION},
                              {"model", setup.shape.name},
                              {"backend", job.engine.backend},
                              {"layout", setup.parallel.name()},
                              {"weights", job.engine.weights.empty() ? "random" : job.engine.weights},
                              {"step_tokens_per_rank", ic.scheduler.max_batch_tokens},
                              {"max_running_requests", ic.scheduler.max_running_requests},
                              {"kv_pages_per_rank", ic.kv.total_pages},
                              {"page_tokens", ic.kv.page_tokens},
                              {"reservation", std::string(to_string(ic.kv.reservation))},
                              {"prefix_cache", ic.kv.prefix_cache},
                              {"policy", std::string(to_string(ic.scheduler.policy))},
                              {"mtp_drafts", job.engine.mtp_drafts},
                              {"workload", job.workload.empty() ? "default" : job.workload},
                              {"time_scale", time_scale},
                              {"seed", job.engine.seed}};
  if (ic.kv.host.pages > 0)  // only with a tier, so other runs keep their bytes (docs/kv-tiers.md)
    j["host_tier"] = {{"pages_per_rank", ic.kv.host.pages},
                      {"write_policy", std::string(to_string(ic.kv.host.write_policy))}};
  return j.dump();
}

int run_job(const RunJob& job) {
  const EngineSetup setup = prepare_engine(job.engine);
  const WorkloadSpec workload = workload_spec(job);
  // A session workload is played against the engine's completions (SourceFeed), a trace read whole.
  const bool sessions = is_session_workload(workload.spec);
  if (sessions) prevalidate_workload(workload);
  const std::vector<TimedRequest> arrivals =
      sessions ? std::vector<TimedRequest>{} : read_arrivals(workload, setup.shape);
  std::unique_ptr<ArrivalSource> session_source = sessions ? open_arrivals(workload) : nullptr;
  RunOutputs outputs(job.engine.out);  // locked; the earlier outputs come back if this run fails
  EngineSetup configured = setup;      // metrics.json's configuration block: what reruns this run
  configured.output.configuration_json = configuration_json(job, setup, workload.options.window.time_scale);
  RealEngine engine(job.engine, configured);
  // The engine's speed around the run (before its first arrival, and after), for sim --speed-of.
  const double probe_before_s = job.speed_probe ? speed_probe_s(engine.runner, setup.runner) : 0.0;
  engine.clock.restart();
  RecorderObserver observer(engine.recorder);
  const EngineLoopResult result = [&] {
    if (!sessions)
      return run_engine_loop(engine.instance, engine.runner, engine.clock, arrivals, job.engine.seed,
                             observer);
    SourceFeed feed(*session_source);
    return run_engine_loop(engine.instance, engine.runner, engine.clock, feed, job.engine.seed, observer);
  }();
  RunInfo info = engine_run_info(job.engine, setup, "real");
  info.workload = describe_workload(workload);
  info.wall_s = engine.clock.now_s();
  if (job.speed_probe) info.speed_probe_s = (probe_before_s + speed_probe_s(engine.runner, setup.runner)) / 2;
  if (const int rc = finish_engine(engine, info, result, "run", job.engine.out); rc != 0) return rc;
  outputs.commit();
  SummaryContext summary;
  summary.command = "run";
  summary.gpus = job.engine.backend == "cuda" ? setup.parallel.gpus() : 0;  // the CPU backend: no GPU
  summary.time_source = "measured: the engine's steps in wall time (" + job.engine.backend + ")";
  summary.json = job.json;
  print_run_summary(job.engine.out, summary);
  return 0;
}

void add_run(CLI::App& app) {
  auto job = std::make_shared<RunJob>();
  CLI::App* cmd = app.add_subcommand("run", "run a workload in wall time on the real engine");
  add_engine_options(*cmd, job->engine);
  cmd->add_option("--workload", job->workload, "a trace file or synthetic:<spec> (as for tokenline sim)");
  cmd->add_option("--max-requests", job->max_requests, "stop after N requests (0: all)");
  cmd->add_option("--time-scale", job->time_scale, "multiply arrival times")->capture_default_str();
  cmd->add_flag("!--no-speed-probe", job->speed_probe,
                "skip the engine's speed probe before and after the run (metrics.json run.speed_probe_s, "
                "for sim --speed-of; ~0.1-0.5 s on the CPU)");
  cmd->add_flag("--json", job->json, "print the summary as one JSON object on stdout instead of the table");
  cmd->callback([job, cmd] {
    job->arguments = given_arguments(*cmd);
    const int rc = run_job(*job);
    if (rc != 0) std::exit(rc);
  });
}

const CommandRegistration kRegistration("run", add_run);

}  // namespace
}  // namespace tokenline::cli
