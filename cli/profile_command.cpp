// `tokenline profile --backend cpu|cuda --model M [--parallel P] [--grid ...] --out DIR`: measures the
// real engine's ops (ledger names) on its kernels over a grid of step shapes (engine/runtime/op_profiler)
// and writes an own profile (profile.json, ops.csv, hardware.json; cost/op_profile_writer) that
// `tokenline sim --profile DIR --hardware DIR/hardware.json` prices the same model and layout from.
// Progress on stderr, one line per grid point.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>

#include "cli/command.h"
#include "cli/engine_job.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/op_profiler.h"
#include "traces/output_file.h"

namespace tokenline::cli {
namespace {

struct ProfileJob {
  EngineJob engine;
  std::string grid;
};

constexpr size_t kHostNameBytes = 256;

// "host (CPU model)" from the host name and /proc/cpuinfo's first "model name".
std::string machine_name(const std::string& backend) {
  char host[kHostNameBytes] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string model;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; model.empty() && std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
  }
  std::string s = std::string(host) + " (" + (model.empty() ? "unknown CPU" : model) + ", " +
                  std::to_string(std::thread::hardware_concurrency()) + " cores)";
  return backend == "cuda" ? s + " with a CUDA device" : s;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int profile_job(ProfileJob& job) {
  const ProfileGrid grid = parse_profile_grid(job.grid);
  job.engine.kv_pages = grid_pages(grid, static_cast<int32_t>(job.engine.page_tokens));
  job.engine.trace_detail = "op";
  const EngineSetup setup = prepare_engine(job.engine);
  retire_previous_outputs(job.engine.out);  // flags judged: only now is --out touched
  const int32_t ranks = setup.parallel.dp_attention * setup.parallel.tp;
  std::fprintf(stderr,
               "tokenline profile: %s on %s, %s, %zu points x (%d warm-up + %d repeats, one pass over the "
               "grid per repeat)\n",
               setup.shape.name.c_str(), job.engine.backend.c_str(), setup.parallel.name().c_str(),
               grid_points(grid, setup.parallel.dp_attention).size(), grid.warmup, grid.repeats);
  SteadyClock clock;
  ModelRunner runner(setup.shape, engine_weights(job.engine, setup.shape), setup.runner, clock);
  const double probe_before_s = speed_probe_s(runner, setup.runner);
  const OpProfileResult result =
      profile_ops(runner, setup.runner, grid, [](size_t done, size_t all, const GridPoint& p, double step_s) {
        std::fprintf(stderr, "tokenline profile: [%zu/%zu] %s%s batch %lld x %lld %s: step %.3f ms\n", done,
                     all, p.decode ? "decode" : "prefill", p.alone ? "-alone" : "",
                     static_cast<long long>(p.batch), static_cast<long long>(p.tokens),
                     p.decode ? "keys" : "tokens", step_s * 1e3);
      });
  std::fprintf(stderr, "tokenline profile: measuring the machine's rates for hardware.json\n");
  const OwnHardware hw = measure_machine(setup.runner.kernels);
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const OwnProfileInfo info{.name = job.engine.backend + "-" + setup.shape.name + "-" + setup.parallel.name(),
                            .hardware = job.engine.backend + "-host",
                            .backend = job.engine.backend,
                            .model = setup.shape.name,
                            .parallel = setup.parallel.name(),
                            .machine = machine_name(job.engine.backend),
                            .threads = std::max<int64_t>(1, cores / ranks),
                            .date = utc_now(),
                            .warmup = grid.warmup,
                            .repeats = grid.repeats,
                            .step_overhead_s = result.step_overhead_s,
                            .speed_probe_s = (probe_before_s + speed_probe_s(runner, setup.runner)) / 2};
  write_own_profile(job.engine.out, info, hw, result.rows);
  std::fprintf(stderr,
               "tokenline profile: %zu rows in %s/ops.csv; use: tokenline sim --profile %s --hardware "
               "%s/hardware.json --model %s --parallel %s\n",
               result.rows.size(), job.engine.out.c_str(), job.engine.out.c_str(), job.engine.out.c_str(),
               setup.shape.name.c_str(), setup.parallel.name().c_str());
  return 0;
}

void add_profile(CLI::App& app) {
  auto job = std::make_shared<ProfileJob>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "measure the real engine's ops over a grid of step shapes into a profile for sim --profile");
  cmd->add_option("--backend", job->engine.backend, "cpu | cuda")->capture_default_str();
  cmd->add_option("--model", job->engine.model, "model preset or config.json (an MLA + DSA model)")
      ->capture_default_str();
  cmd->add_option("--weights", job->engine.weights, "safetensors checkpoint (default: random weights)");
  cmd->add_option("--parallel", job->engine.parallel, "tpN, dpN, epN parts, e.g. tp2, dp2-tp2-ep4")
      ->capture_default_str();
  cmd->add_option("--page-size", job->engine.page_tokens, "KV page size in tokens")->capture_default_str();
  cmd->add_option("--seed", job->engine.seed, "seed for random weights")->capture_default_str();
  cmd->add_option("--grid", job->grid,
                  "shapes, e.g. 'decode-batch=1,4,16;decode-keys=64,512,2048;prefill-batch=1,4;"
                  "prefill-tokens=16,128,512;warmup=1;repeats=3' (any subset; these are the defaults)");
  cmd->add_option("--out", job->engine.out, "profile directory (profile.json, ops.csv, hardware.json)")
      ->required();
  cmd->callback([job] {
    const int rc = profile_job(*job);
    if (rc != 0) std::exit(rc);
  });
}

const CommandRegistration kRegistration("profile", add_profile);

}  // namespace
}  // namespace tokenline::cli
