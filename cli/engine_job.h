// EngineJob: what `tokenline run` and `tokenline serve` share - the real engine's options (model,
// weights, backend, --parallel, --mtp, the scheduler and KV options, outputs), their validation into
// the runner's, the instance's and the recorder's configurations, and the observer that records the
// engine loop's events. CLI11 stays out of this header.
#pragma once

#include <cstdint>
#include <string>

#include "cli/kv_tier_options.h"
#include "cli/trace_options.h"
#include "engine/core/instance.h"
#include "engine/model/parallel.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/engine_loop.h"
#include "engine/runtime/model_runner.h"
#include "run/recorder.h"

namespace CLI {
class App;
}

namespace tokenline::cli {

struct EngineJob {
  std::string backend = "cpu";
  std::string model = "glm-5.3-tiny";
  std::string weights;  // safetensors path; empty: seeded random weights
  std::string out;
  uint64_t seed = 0;
  // Scheduler defaults are tokenline sim's, so a replay needs only --model, --parallel and --kv-pages.
  int64_t chunk_tokens = 32768;
  int64_t page_tokens = 64;
  int64_t kv_pages = 256;  // per rank: 16k tokens at 64-token pages, 12.8 MB at glm-5.3-tiny's 784 B/token
  std::string parallel = "tp1";  // tpN, dpN, epN parts as for tokenline sim
  int32_t mtp_drafts = 0;        // MTP draft tokens per decode step (0 or 1)
  std::string reservation = "whole";
  std::string policy = "fcfs";
  int32_t max_running = 1024;
  bool prefix_cache = true;
  KvTierFlags kv_tier;  // the host KV tier (cli/kv_tier_options.h): pages really copied out and back
  std::string trace_detail = "op";
  TraceOptions trace;  // --trace-window, --trace-requests, --trace-gzip
  std::string slo;     // goodput SLO, as tokenline sim's --slo
};

// Declares the options above on a subcommand.
void add_engine_options(CLI::App& cmd, EngineJob& job);

// A validated job: every InputError (option, model, layout, output directory) is thrown here, before
// anything runs.
struct EngineSetup {
  ModelShape shape;
  Parallel parallel;
  RunnerConfig runner;
  InstanceConfig instance;
  OutputConfig output;
  Slo slo;
};
// Judges every engine flag and builds the setup; touches nothing on disk (the caller claims --out after).
EngineSetup prepare_engine(const EngineJob& job);

// The job's weights: its checkpoint, or random ones from its seed.
ModelWeights engine_weights(const EngineJob& job, const ModelShape& shape);

// The run block of metrics.json; the caller adds workload, times and events.
RunInfo engine_run_info(const EngineJob& job, const EngineSetup& setup, const char* mode);

// "tokenline <mode>: N arrived, ..." on stderr, and a warning when requests were left unscheduled.
void print_engine_summary(const char* mode, const Metrics& m, const EngineLoopResult& result,
                          const std::string& out);

// The real engine of one validated job, built the same way for `tokenline run` and `tokenline serve` (as
// sim/driver builds the simulator): the wall clock, the runner over the job's weights on that clock, the
// instance and the recorder that describes it. Members in construction order; not copyable.
struct RealEngine {
  RealEngine(const EngineJob& job, const EngineSetup& setup);
  SteadyClock clock;
  ModelRunner runner;
  Instance instance;
  Recorder recorder;
};

// Commits the outputs with `info` (its simulated time from the loop's result; the caller sets wall_s
// where its run ends) and prints the summary as `command`. 0, or 1 with the recorder's reason on stderr.
int finish_engine(RealEngine& engine, RunInfo info, const EngineLoopResult& result, const char* command,
                  const std::string& out);

// Forwards the engine loop's events to the recorder (one instance).
class RecorderObserver : public EngineObserver {
 public:
  explicit RecorderObserver(Recorder& recorder) : recorder_(recorder) {}
  void on_arrival(RequestId id, double now_s) override { recorder_.on_arrival(0, id, now_s); }
  void on_preemption(RequestId id, double now_s, bool retraction) override {
    recorder_.on_preemption(0, id, now_s, retraction);
  }
  void on_step(const StepPlan& plan, const StepOutcome& outcome, double start_s,
               const InstanceCounters& counters) override {
    recorder_.on_step(0, plan, outcome, nullptr, start_s, counters);
  }
  void on_record(const RequestRecord& record) override { recorder_.on_record(record, 0); }

 private:
  Recorder& recorder_;
};

}  // namespace tokenline::cli
