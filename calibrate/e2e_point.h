// E2ePoint: one end-to-end measurement of a real deployment, a row of the silicon CSV format
// (aiconfigurator's silicon_sample.csv: `concurrency` closed-loop clients sending fixed `isl`-token prompts
// for `osl` tokens, with the measured mean TTFT and TPOT). read_e2e_points parses and validates a file of
// them; bad input is one InputError naming file:line, the column, what was expected and what was found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

enum class E2eMode {
  kAggregated,     // "agg": prefill and decode on the same instances
  kDisaggregated,  // "disagg": prefill workers hand KV to decode workers
};
std::string_view to_string(E2eMode mode);

// One instance's layout as the CSV spells it: tp x attention_dp GPUs; experts split moe_tp x moe_ep ways.
struct E2eLayout {
  int32_t tp = 1;
  int32_t attention_dp = 1;
  int32_t moe_tp = 1;
  int32_t moe_ep = 1;
  int32_t workers = 1;  // disaggregated: instances of this layout (num_workers; empty in the CSV means 1)
  // Disaggregated: whether the CSV gives num_workers. Older aiconfigurator dumps leave it (and the batch
  // sizes) empty; their deployment is then not known, and aiconfigurator's own predictor refuses the row.
  bool workers_recorded = true;
};

struct E2ePoint {
  int64_t line = 0;        // 1-based line in the file, for messages and tables
  std::string model_path;  // "deepseek-ai/DeepSeek-R1"
  std::string backend;     // "sglang"
  std::string backend_version;
  std::string precision;        // "fp8", "bf16"
  std::string gemm_quant_mode;  // "fp8", "fp8_block", "bfloat16", ...
  E2eMode mode = E2eMode::kAggregated;
  int32_t concurrency = 0;
  int64_t isl = 0;            // input tokens per request
  int64_t osl = 0;            // output tokens per request
  E2eLayout agg;              // kAggregated
  E2eLayout prefill, decode;  // kDisaggregated
  double ttft_ms = 0;         // measured mean time to first token
  double tpot_ms = 0;         // measured mean time per output token
  // The deployment's engine flags as `tokenline sim` options, from the optional column `sim_args`
  // (tokenline's, not aiconfigurator's; split at spaces: "--mem-fraction 0.82 --max-running 256"), for
  // rows whose deployment ran other flags than the profile engine's defaults. Empty: the defaults.
  std::vector<std::string> sim_args;
  // How the row's client measured it, where that differs from calibrate's benchmark protocol (optional
  // columns `warmup_per_client`, `requests_per_client`, `length_range_ratio`; an empty cell or no column:
  // calibrate's --warmup-per-client and --requests-per-client, fixed lengths). A ratio r < 1 draws each
  // request's input and output lengths uniformly in [floor(r x isl), isl] and [floor(r x osl), osl], as
  // vLLM's benchmark_serving --random-range-ratio (SemiAnalysis' sa-bench) did.
  // A row that leaves all three empty but whose `silicon_data_source` (aiconfigurator's provenance column)
  // names an InferenceX run takes that client's protocol (inferencex_protocol below; client_from_source).
  std::optional<int32_t> warmup_per_client;    // >= 0
  std::optional<int32_t> requests_per_client;  // >= 1
  double length_range_ratio = 1;               // in (0, 1]
  bool client_from_source = false;             // the three above read from silicon_data_source
  // Set by calibrate (calibrate/prefill_load.h): the measured rate needs more prefill than the instance has.
  bool prefill_overloaded = false;
};

// How an InferenceX run's client measured it, read from a silicon_sample.csv row's `silicon_data_source`:
// "db-dump/<date>; config_id=...; measured=<time>; ..." (InferenceX's result database) or
// "source_file=<date>.csv; model=...; measured=<time>; ..." (its exported results); nullopt for any other
// source (aiconfigurator's own sweeps, "source_file=<path>/aic-auto-gap-analysis/...", ran aiperf:
// calibrate's default protocol) or without a `measured` time. InferenceX's client, SemiAnalysis'
// benchmark_serving.py (kimbochen/bench_serving), sends 10·C prompts with --random-range-ratio 0.8
// (benchmarks/benchmark_lib.sh; the 2025 runners' benchmark-tmpl.yml), and from InferenceX d053ae24e
// (2026-01-21T17:53:38Z, "upstream kimbochen/bench_serving, adding warmup") a warm-up of 2·C prompts first
// (--num-warmups; srt-slurm's sa-bench of the multi-node runs likewise from 2026-01-23); runs measured
// before it, none.
struct ClientProtocol {
  int32_t warmup_per_client = 0;
  int32_t requests_per_client = 0;
  double length_range_ratio = 1;
};
std::optional<ClientProtocol> inferencex_protocol(std::string_view silicon_data_source);

// The lengths a row's client drew for a nominal `tokens` (isl or osl) under its length_range_ratio r: the
// shortest, max(1, floor(r x tokens)) (numpy's randint(int(r x L), L + 1)), and the mean, halfway from the
// shortest to `tokens`. With r = 1 both are `tokens`.
int64_t shortest_length(int64_t tokens, double range_ratio);
double mean_length(int64_t tokens, double range_ratio);

// Whether the row says what was deployed: aggregated rows always; disaggregated rows when both their
// prefill and decode num_workers are given. A row that does not is still predicted (as 1 worker each),
// but reported apart and left out of calibrate's fits: a fit should not follow a guessed deployment.
bool deployment_recorded(const E2ePoint& point);

// Why calibrate reports a point apart and leaves it out of fits and of the objective: its deployment is
// not recorded (mode "disagg?"), or its measured rate needs more prefill than the instance has ("agg!").
enum class SetApart { kNo, kDeploymentUnrecorded, kPrefillOverloaded };
SetApart set_apart(const E2ePoint& point);

// Reads the CSV (header row naming the columns; any column order; extra columns ignored).
// Throws InputError("<path>:<line>: <column>", expected, found) on a missing column, a row with another
// number of fields than the header, a non-numeric or non-positive count or latency, an unknown mode, or a
// sim_args cell that does not start with an option, quotes a word, or names an option the row's other
// columns or calibrate set (--model, --parallel, --pd, --workload, --concurrency, ...), a negative
// warmup_per_client, a requests_per_client below 1, or a length_range_ratio outside (0, 1].
std::vector<E2ePoint> read_e2e_points(const std::string& path);

// The same from text already in memory; `path` only names the source in messages.
std::vector<E2ePoint> parse_e2e_points(std::string_view text, const std::string& path);

}  // namespace tokenline
