// SimPoint: how one E2ePoint becomes a `tokenline sim` run, and what that run predicted. The mapping:
//   model    the model's config.json (PointModels resolves model_path)
//   layout   --parallel from tp x attention_dp GPUs and the expert split (moe_ep > 1: epN), "tp8", "dp8-ep8";
//            disaggregated: --pd xPyD from the workers, one layout per instance (prefill ones first)
//   workload synthetic: n fixed-length requests (input = isl, output = osl), closed loop --concurrency C;
//            n = max((warmup_per_client + requests_per_client) x C, min_requests), the benchmark's protocol
//            (aiconfigurator's bench_run.sh template: aiperf --warmup-request-count 2 x C, --num-requests
//            20 x C): the first warmup_per_client x C requests (by id = arrival order) run as `sim
//            --warmup`'s phase - the measured requests are sent once all of them have left, C at once, as
//            aiperf waits for every warm-up response before profiling - and are left out of the means.
//            A row that says how its client measured it (E2ePoint::warmup_per_client, requests_per_client,
//            length_range_ratio) overrides the options' counts, and its ratio r < 1 draws lengths
//            uniform:floor(r x isl):isl and uniform:floor(r x osl):osl
//   engine   the flags aiconfigurator's generator sets on the SGLang deployments it benchmarks
//            (generator/rule_plugin/benchmark/sglang.rule): aggregated points --mixed-steps on when
//            mixed_steps (enable_mixed_chunk = true); every instance --max-prefill-tokens isl + margin when
//            prefill_margin >= 0 (max_prefill_tokens = isl + 1500); then the row's own sim_args (the flags
//            its deployment ran; its --profile-set only when the run has a --profile: the roofline has no
//            profile terms), then options.extra_args (--profile, a fit's --profile-set, --sim-args): a
//            later one replaces an earlier option of the same name, and every --profile-set merges into one
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/e2e_point.h"

namespace tokenline {

struct SimPointOptions {
  std::string binary;                // the tokenline executable
  std::string hardware = "h200";     // preset or JSON path (calibration writes fitted copies)
  int32_t requests_per_client = 20;  // measured requests per client
  int32_t warmup_per_client = 2;     // warm-up requests per client, run first and not measured
  int32_t min_requests = 32;
  bool mixed_steps = true;              // aggregated points: prefill chunks and decodes in one step
  int64_t prefill_margin = -1;          // >= 0: --max-prefill-tokens = isl + this; < 0: the engine's (no cap)
  std::vector<std::string> extra_args;  // appended to every run (--profile P, --profile-set ...)
};

// "tp8", "tp2", "dp8-ep8", "tp8-ep8": tp x attention_dp GPUs, experts over moe_ep ranks when moe_ep > 1.
// Throws InputError at `where` when moe_ep > 1 and moe_tp x moe_ep is not the GPU count.
std::string parallel_name(const E2eLayout& layout, const std::string& where);

// The value the last `option` in `args` gives it ("--name value" or "--name=value"), as sim reads a repeated
// option; "" when args do not give it.
std::string option_value(const std::vector<std::string>& args, const std::string& option);

// Requests in the synthetic workload of `p` (the row's own counts per client where it gives them).
int64_t request_count(const E2ePoint& p, const SimPointOptions& options);

// The arguments after the executable: sim --model ... --out out_dir.
std::vector<std::string> sim_arguments(const E2ePoint& p, const std::string& model_config,
                                       const std::string& out_dir, const SimPointOptions& options);

struct SimPrediction {
  bool ok = false;
  double ttft_ms = 0;  // mean over completed requests
  double tpot_ms = 0;
  int64_t completed = 0;
  std::string error;  // !ok: the run's exit code and the last line of its log
};

// Requests of the point's warm-up (not measured).
int64_t warmup_count(const E2ePoint& p, const SimPointOptions& options);

// Reads <out_dir>/requests.csv after a run that exited with `exit_code` (log_path holds its output): mean
// TTFT and TPOT (per request: (finish - first token) / (output - 1)) over the completed requests whose id
// is warmup or more.
SimPrediction read_prediction(const std::string& out_dir, int exit_code, const std::string& log_path,
                              int64_t warmup = 0);

}  // namespace tokenline
