// `tokenline quickstart --out DIR`: the README's main job. `tokenline sim` on the embedded defaults: the
// first 200 requests of the Mooncake conversation trace (compiled into the binary), GLM-5.3 on 8xH200 as
// one dp8-ep8 instance. Finishes in seconds and writes metrics.json, requests.csv and trace.json.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli/command.h"
#include "cli/sim_job.h"
#include "cli/sim_options.h"

namespace tokenline::cli {
namespace {

void add_quickstart(CLI::App& app) {
  auto job = std::make_shared<SimJob>();
  CLI::App* cmd =
      app.add_subcommand("quickstart", "simulate GLM-5.3 on 8xH200 (dp8-ep8) on an embedded trace slice");
  cmd->add_option("--out", job->out, "output directory")->capture_default_str();
  cmd->add_option("--trace-detail", job->trace_detail, "trace.json detail: step | op")->capture_default_str();
  job->out = "out";
  cmd->add_flag("--json", job->json, "print the summary as one JSON object on stdout instead of the table");
  cmd->callback([job, cmd] {
    job->arguments = given_arguments(*cmd);
    job->workload = "default";  // the embedded Mooncake conversation head, the seed's workload
    job->cluster = "h200x8";
    // The seed article's deployment runs DeepEP's all-to-all ("DeepEP dispatch + combine: 339MB, 150 次",
    // tests/engine/model/ledger_golden_test.cpp), which SGLang runs only when asked (server_args.py
    // moe_a2a_backend default "none"; cost/engine_behavior.cpp sglang_behavior): asked for here.
    job->moe_a2a_backend = "deepep";
    job->progress = ::isatty(STDERR_FILENO) != 0;
    const int rc = run_sim_job(*job);
    if (rc != 0) std::exit(rc);
  });
}

const CommandRegistration kRegistration("quickstart", add_quickstart);

}  // namespace
}  // namespace tokenline::cli
