// SimPoint: how one E2ePoint becomes a `tokenline sim` run, and what that run predicted. The mapping:
//   model    the model's config.json (PointModels resolves model_path)
//   layout   --parallel from tp x attention_dp GPUs and the expert split (moe_ep > 1: epN), "tp8", "dp8-ep8";
//            disaggregated: --pd xPyD from the workers, one layout per instance (prefill ones first)
//   workload synthetic: n fixed-length requests (input = isl, output = osl), closed loop --concurrency C;
//            n = max(requests_per_client x C, min_requests) so most requests run in the steady state
//            after the first wave (which all arrive at once, as the benchmark's clients do)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/e2e_point.h"

namespace tokenline {

struct SimPointOptions {
  std::string binary;             // the tokenline executable
  std::string hardware = "h200";  // preset or JSON path (calibration writes fitted copies)
  int32_t requests_per_client = 4;
  int32_t min_requests = 32;
  std::vector<std::string> extra_args;  // appended to every run (--profile P, --profile-set ...)
};

// "tp8", "tp2", "dp8-ep8", "tp8-ep8": tp x attention_dp GPUs, experts over moe_ep ranks when moe_ep > 1.
// Throws InputError at `where` when moe_ep > 1 and moe_tp x moe_ep is not the GPU count.
std::string parallel_name(const E2eLayout& layout, const std::string& where);

// Requests in the synthetic workload of `p`.
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

// Reads <out_dir>/metrics.json after a run that exited with `exit_code`; log_path holds its output.
SimPrediction read_prediction(const std::string& out_dir, int exit_code, const std::string& log_path);

}  // namespace tokenline
