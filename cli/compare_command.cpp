// `tokenline compare <predicted trace.json> <measured trace.json> [--json] [--out FILE]`: a simulated run
// joined with a real one step by step (traces/trace_compare.h): per op name and for whole steps, the
// totals, their ratio and the per-step relative error, and whether the two runs made the same scheduling
// decisions; and, when each trace has its requests.csv beside it, request by request (TTFT, E2E, and
// outcomes: status, cached tokens, preemptions). This file only reads, validates and formats.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/command.h"
#include "common/input_error.h"
#include "traces/output_file.h"
#include "traces/request_compare.h"
#include "traces/trace_compare.h"
#include "traces/trace_reader.h"

namespace tokenline::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kMsPerS = 1e3;
constexpr double kPercent = 100;

struct CompareArgs {
  std::string predicted;
  std::string measured;
  std::string out;  // also write the JSON here
  bool json = false;
};

// One line saying that the runs decided differently, with the first difference; empty when they agree.
std::string decision_warning(const TraceComparison& c) {
  if (c.differing_steps == 0) return "";
  std::string line = "warning: the runs made different scheduling decisions in " +
                     std::to_string(c.differing_steps) + " of " + std::to_string(c.decision_steps) +
                     " compared steps, so per-step errors compare different batches";
  if (!c.first_differences.empty()) {
    const DecisionMismatch& d = c.first_differences.front();
    line += "; first at instance " + std::to_string(d.instance) + " step " + std::to_string(d.step) +
            " rank " + std::to_string(d.rank) + ": predicted " + d.predicted + ", measured " + d.measured;
  }
  return line;
}

// ---- table ----

void print_row(const TimeComparison& r) {
  const double ratio = r.ratio();
  std::printf("%-20s %6lld %14.4g %14.4g ", r.name.c_str(), static_cast<long long>(r.steps),
              r.predicted_s * kMsPerS, r.measured_s * kMsPerS);
  if (std::isnan(ratio)) {
    std::printf("%9s ", "-");
  } else {
    std::printf("%9.4g ", ratio);
  }
  if (r.error.samples == 0) {
    std::printf("%9s %9s\n", "-", "-");
  } else {
    std::printf("%8.1f%% %8.1f%%\n", r.error.mean * kPercent, r.error.p90 * kPercent);
  }
}

void print_latency(const LatencyComparison& l) {
  std::printf("%-20s %6lld %14.4g %14.4g ", l.name.c_str(), static_cast<long long>(l.requests),
              l.predicted_mean_s * kMsPerS, l.measured_mean_s * kMsPerS);
  if (l.error.samples == 0) {
    std::printf("%9s %9s %9s\n", "-", "-", "-");
    return;
  }
  std::printf("%9.4g %8.1f%% %8.1f%%\n", l.predicted_mean_s / l.measured_mean_s, l.error.mean * kPercent,
              l.error.p90 * kPercent);
}

void print_requests(const RequestComparison& r) {
  std::printf(
      "\nrequests: %lld joined on id, %lld predicted only, %lld measured only; %lld completed on both; "
      "outcomes differ: status %lld, cached tokens %lld, preemptions %lld\n",
      static_cast<long long>(r.joined), static_cast<long long>(r.predicted_only),
      static_cast<long long>(r.measured_only), static_cast<long long>(r.completed_both),
      static_cast<long long>(r.status_differs), static_cast<long long>(r.cached_differs),
      static_cast<long long>(r.preemptions_differ));
  std::printf("%-20s %6s %14s %14s %9s %9s %9s\n", "latency", "reqs", "pred mean ms", "meas mean ms", "ratio",
              "MAPE", "p90 err");
  print_latency(r.ttft);
  print_latency(r.e2e);
}

void print_table(const CompareArgs& a, const TraceComparison& c) {
  std::printf("tokenline compare: predicted %s, measured %s\n", a.predicted.c_str(), a.measured.c_str());
  std::printf("steps: %lld joined on (instance, step), %lld predicted only, %lld measured only\n",
              static_cast<long long>(c.joined_steps), static_cast<long long>(c.predicted_only_steps),
              static_cast<long long>(c.measured_only_steps));
  std::printf(
      "decisions: %lld steps compared (%lld by batch entries, the rest by token and request counts), "
      "%lld differ\n",
      static_cast<long long>(c.decision_steps), static_cast<long long>(c.decision_steps_by_batch),
      static_cast<long long>(c.differing_steps));
  const std::string warning = decision_warning(c);
  if (!warning.empty()) std::printf("%s\n", warning.c_str());
  std::printf("\n%-20s %6s %14s %14s %9s %9s %9s\n", "op", "steps", "predicted ms", "measured ms", "ratio",
              "MAPE", "p90 err");
  for (const TimeComparison& r : c.ops) print_row(r);
  print_row(c.step);
  std::printf(
      "(op time in a step: the slowest rank's summed spans; ratio = predicted / measured; errors "
      "|predicted - measured| / measured per step)\n");
}

// ---- JSON ----

Json row_json(const TimeComparison& r) {
  const double ratio = r.ratio();
  return {
      {"name", r.name},
      {"steps", r.steps},
      {"predicted_steps", r.predicted_steps},
      {"measured_steps", r.measured_steps},
      {"predicted_s", r.predicted_s},
      {"measured_s", r.measured_s},
      {"ratio", std::isnan(ratio) ? Json(nullptr) : Json(ratio)},
      {"relative_error",
       {{"samples", r.error.samples}, {"mape", r.error.mean}, {"p50", r.error.p50}, {"p90", r.error.p90}}}};
}

Json latency_json(const LatencyComparison& l) {
  return {
      {"requests", l.requests},
      {"predicted_mean_s", l.predicted_mean_s},
      {"measured_mean_s", l.measured_mean_s},
      {"relative_error",
       {{"samples", l.error.samples}, {"mape", l.error.mean}, {"p50", l.error.p50}, {"p90", l.error.p90}}}};
}

Json requests_json(const std::optional<RequestComparison>& r) {
  if (!r) return nullptr;
  return {{"joined", r->joined},
          {"predicted_only", r->predicted_only},
          {"measured_only", r->measured_only},
          {"completed_both", r->completed_both},
          {"outcomes_differ",
           {{"status", r->status_differs},
            {"cached_tokens", r->cached_differs},
            {"preemptions", r->preemptions_differ}}},
          {"ttft", latency_json(r->ttft)},
          {"e2e", latency_json(r->e2e)}};
}

Json comparison_json(const CompareArgs& a, const TraceComparison& c) {
  Json differences = Json::array();
  for (const DecisionMismatch& d : c.first_differences) {
    differences.push_back({{"instance", d.instance},
                           {"step", d.step},
                           {"rank", d.rank},
                           {"predicted", d.predicted},
                           {"measured", d.measured}});
  }
  Json ops = Json::array();
  for (const TimeComparison& r : c.ops) ops.push_back(row_json(r));
  const std::string warning = decision_warning(c);
  return {{"predicted", a.predicted},
          {"measured", a.measured},
          {"steps",
           {{"joined", c.joined_steps},
            {"predicted_only", c.predicted_only_steps},
            {"measured_only", c.measured_only_steps}}},
          {"decisions",
           {{"compared_steps", c.decision_steps},
            {"compared_by_batch", c.decision_steps_by_batch},
            {"differing_steps", c.differing_steps},
            {"same", c.differing_steps == 0},
            {"first_differences", std::move(differences)}}},
          {"warning", warning.empty() ? Json(nullptr) : Json(warning)},
          {"step", row_json(c.step)},
          {"ops", std::move(ops)}};
}

void write_json(const std::string& path, const Json& doc) {
  OutputFile file(path);
  file.buffer() = doc.dump(2) + "\n";
  if (!file.commit()) throw InputError(path, "a writable file for --out", "a failed write");
}

// The requests.csv beside a trace.json, when there is one.
std::optional<std::string> requests_beside(const std::string& trace) {
  const std::filesystem::path csv = std::filesystem::path(trace).parent_path() / "requests.csv";
  if (!std::filesystem::exists(csv)) return std::nullopt;
  return csv.string();
}

// Request by request, when both runs' requests.csv sit beside their traces.
std::optional<RequestComparison> compare_requests_beside(const CompareArgs& a) {
  const auto predicted = requests_beside(a.predicted), measured = requests_beside(a.measured);
  if (!predicted || !measured) return std::nullopt;
  return compare_requests(read_requests_csv(*predicted), read_requests_csv(*measured));
}

void run_compare(const CompareArgs& a) {
  const RecordedRun predicted = read_recorded_run(a.predicted);
  const RecordedRun measured = read_recorded_run(a.measured);
  const std::optional<RequestComparison> requests = compare_requests_beside(a);
  const TraceComparison c = compare_runs(predicted, measured);
  if (c.joined_steps == 0) {
    throw InputError(a.measured, "steps sharing (instance, step index) with the predicted " + a.predicted,
                     "none (" + std::to_string(c.predicted_only_steps) + " predicted steps, " +
                         std::to_string(c.measured_only_steps) + " measured)");
  }
  Json doc = comparison_json(a, c);
  doc["requests"] = requests_json(requests);
  if (!a.out.empty()) write_json(a.out, doc);
  if (!a.json) {
    print_table(a, c);
    if (requests) print_requests(*requests);
    return;
  }
  std::cout << doc.dump(2) << "\n";
  const std::string warning = decision_warning(c);
  if (!warning.empty()) std::fprintf(stderr, "tokenline compare: %s\n", warning.c_str());
}

void add_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Join a predicted trace.json (tokenline sim) with a measured one (tokenline run) step by step");
  cmd->add_option("predicted", args->predicted,
                  "trace.json (or .gz) of the prediction (tokenline sim --trace-detail op)")
      ->required();
  cmd->add_option("measured", args->measured, "trace.json (or .gz) of the measurement (tokenline run)")
      ->required();
  cmd->add_flag("--json", args->json, "JSON on stdout instead of the table");
  cmd->add_option("--out", args->out, "also write the JSON to this file");
  cmd->callback([args] { run_compare(*args); });
}

const CommandRegistration kRegistration("compare", add_compare);

}  // namespace
}  // namespace tokenline::cli
