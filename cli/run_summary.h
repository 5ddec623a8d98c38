// The answer of a run on the terminal (`sim`, `run`, `quickstart`): read back from the metrics.json the run
// committed, so that every mode (co-located, PD, replay, the real engine) prints the same figures from the
// same file. A table on stdout (requests, duration, throughput total and per GPU, TTFT / TPOT / ITL / E2E
// mean p50 p90 p99, goodput under --slo, KV peak, preemptions and retractions, prefix hit rate, what priced
// the steps and how far published runs priced that way say to trust it, each default the run took), or one
// JSON object with --json; the overload warning on stderr.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace tokenline::cli {

// What metrics.json does not say about the run: filled by the command that ran it.
struct SummaryContext {
  std::string command;                // "sim", "run", "quickstart": the prefix of stderr lines
  int32_t gpus = 0;                   // GPUs of every instance together (0: not known; no per-GPU figures)
  std::string time_source;            // what priced the steps ("roofline (no --profile)", ...)
  std::vector<std::string> defaults;  // each default the run took, as "what: value (why)"
  std::vector<std::string> accuracy;  // accuracy_note's lines (calibrate/accuracy_table.h); empty: none
  double offered_rate_rps = 0;        // --rate as asked (0: the workload's own times)
  double native_rate_rps = 0;         // the trace's own rate when --rate rescaled it (0: not rescaled)
  bool json = false;                  // --json: the summary as one JSON object on stdout, no table
};

// The summary of a metrics.json document, as --json prints it.
nlohmann::ordered_json summary_json(const nlohmann::json& metrics, const SummaryContext& context);
// The table printed on stdout, from summary_json's object.
std::string summary_table(const nlohmann::ordered_json& summary);
// The overload warning, from summary_json's object ("" when the run sustained what it was offered).
std::string overload_warning(const nlohmann::ordered_json& summary);

// Reads <out_dir>/metrics.json and prints the table (or the JSON) on stdout and any warning on stderr.
// Returns false (with the reason on stderr) when metrics.json cannot be read back.
bool print_run_summary(const std::string& out_dir, const SummaryContext& context);

}  // namespace tokenline::cli
