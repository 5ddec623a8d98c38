// `tokenline plan`: the deployment to rent for a model, GPUs, workload and SLO, searched by simulation
// (issue 14; docs/architecture.md "Simulation driver"). `tokenline plan merge` joins the partials of
// --shard runs.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "calibrate/accuracy_table.h"
#include "calibrate/process_pool.h"
#include "cli/command.h"
#include "cli/preset_names.h"
#include "cli/slo_option.h"
#include "cli/time_source_choice.h"
#include "common/input_error.h"
#include "cost/op_profile.h"
#include "engine/model/model_config.h"
#include "plan/plan_json.h"
#include "plan/plan_report.h"
#include "plan/plan_runner.h"
#include "run/model_files.h"
#include "run/workload_arrivals.h"
#include "sim/backends/cluster_hardware.h"
#include "topologies/gpu_price.h"
#include "topologies/hardware_loader.h"

namespace tokenline::cli {
namespace {

struct PlanOptions {
  std::string model = "glm-5.3";
  std::string weights_format;  // --weights-format ("": the checkpoint's)
  std::string cluster;
  std::string hardware;
  int32_t gpus = 0;
  std::string workload;
  std::string slo;
  std::string chunks = "8192,16384,32768";
  std::string max_running = "32,256";
  bool no_pd = false;
  int32_t probes = 6;
  std::string rate_range;  // "LO:HI" requests/s: the rate search's range, not widened
  int64_t max_requests = 0;
  uint64_t seed = 0;
  int32_t jobs = 1;
  std::string shard;
  std::string out;
  std::string profile;
  std::string engine;  // sglang | vllm | trtllm: the profile <hardware>-<engine>
  std::string profile_set;
  bool roofline = false;  // --roofline: the seed's model instead of the best available
  std::vector<std::string> merge_inputs;
  std::string merge_out;
  std::string rank = "throughput";  // throughput | cost (docs/cost.md)
  std::string gpu_price;  // "": none ("list" under --rank cost); "list"; USD or a list per --hardware
};

template <typename T>
std::vector<T> parse_list(const std::string& text, const char* option) {
  std::vector<T> values;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || v <= 0)
      throw InputError(option, "a comma list of positive integers", "'" + text + "'");
    values.push_back(static_cast<T>(v));
  }
  if (values.empty()) throw InputError(option, "a comma list of positive integers", "nothing");
  return values;
}

// "k/N" with 1 <= k <= N.
std::pair<int32_t, int32_t> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  int k = 0, n = 0;
  size_t used_k = 0, used_n = 0;
  try {
    k = std::stoi(text.substr(0, slash), &used_k);
    n = std::stoi(text.substr(slash + 1), &used_n);
  } catch (const std::exception&) {
    used_k = 0;
  }
  if (slash == std::string::npos || used_k != slash || used_n != text.size() - slash - 1 || n < 1 || k < 1 ||
      k > n) {
    throw InputError("--shard", "k/N with 1 <= k <= N (e.g. 2/4)", "'" + text + "'");
  }
  return {k, n};
}

PlanSetup build_setup(const PlanOptions& o, Hardware& hardware) {
  PlanSetup s;
  check_preset_flags({.model = o.model,
                      .hardware = o.hardware,
                      .cluster = o.cluster,
                      .profile = o.profile,
                      .engine = o.engine});
  if (o.slo.empty()) throw InputError("--slo", "ttft=<duration>,tpot=<duration>", "nothing");
  s.slo = parse_slo(o.slo);
  s.target = PlanTarget{.model = o.model,
                        .cluster = o.cluster,
                        .hardware = o.hardware,
                        .workload = o.workload == "default" ? "" : o.workload,
                        .slo = o.slo,
                        .max_requests = o.max_requests,
                        .seed = o.seed,
                        .profile = o.profile,
                        .profile_set = o.profile_set,
                        .weights_format = o.weights_format};
  if (!o.cluster.empty() && (!o.hardware.empty() || o.gpus != 0))
    throw InputError("--cluster", "either --cluster or --hardware with --gpus", "both");
  if (!o.cluster.empty()) {
    const ClusterHardware cluster = load_cluster_hardware(o.cluster);
    hardware = cluster.hardware;
    s.hardware_name = cluster.hardware.name;
    s.space.gpus = cluster.gpus;
  } else {
    if (o.hardware.empty() || o.gpus < 1)
      throw InputError("--hardware", "--cluster C, or --hardware H with --gpus N >= 1", "neither");
    hardware = load_hardware(o.hardware);
    s.hardware_name = o.hardware;
    s.space.gpus = o.gpus;
  }
  if (o.roofline && (!o.profile.empty() || !o.engine.empty()))
    throw InputError(
        "--roofline", "either --roofline or a profile (--profile, --engine)",
        "both (" + (o.profile.empty() ? "--engine " + o.engine : "--profile " + o.profile) + ")");
  if (!o.profile_set.empty() && o.profile.empty() && o.engine.empty())
    throw InputError("--profile-set", "a --profile (or --engine) to override", "no --profile");
  s.target.profile = profile_for_engine(o.profile, o.engine, hardware);
  s.space.chunk_tokens = parse_list<int64_t>(o.chunks, "--chunks");
  s.space.max_running = parse_list<int32_t>(o.max_running, "--max-running-set");
  s.space.pd = !o.no_pd;
  if (o.probes < 1) throw InputError("--probes", "a positive count", std::to_string(o.probes));
  s.search.probes = o.probes;
  return s;
}

// --rate-range LO:HI (requests per second): positive, finite, LO < HI.
std::pair<double, double> parse_rate_range(const std::string& text) {
  const size_t colon = text.find(':');
  double lo = 0, hi = 0;
  try {
    size_t used_lo = 0, used_hi = 0;
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    lo = std::stod(text.substr(0, colon), &used_lo);
    hi = std::stod(text.substr(colon + 1), &used_hi);
    if (used_lo != colon || used_hi != text.size() - colon - 1) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError("--rate-range", "LO:HI in requests per second, e.g. 1:64", "'" + text + "'");
  }
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi))
    throw InputError("--rate-range", "0 < LO < HI, finite (requests per second)", "'" + text + "'");
  return {lo, hi};
}

WorkloadProfile read_workload_profile(const PlanOptions& o) {
  WorkloadSpec w;
  w.spec = o.workload == "default" ? "" : o.workload;
  w.options.seed = o.seed;
  if (o.max_requests > 0) w.options.window.max_requests = o.max_requests;
  prevalidate_workload(w);
  return profile_workload(*open_arrivals(w));
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw InputError("--out", "a writable directory", path);
}

// --hardware h200,b200: the plans of each, ranked together (docs/cost.md).
std::vector<std::string> hardware_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) throw InputError("--hardware", "a hardware or a comma list of them", "'" + text + "'");
    out.push_back(part);
  }
  if (out.empty()) out.emplace_back();  // --cluster: its hardware
  return out;
}

// Each hardware's price per GPU-hour for the rows (0: none): --gpu-price USD for all, one per --hardware
// (comma list), or "list" (the hardware JSON's list price; the default under --rank cost).
std::vector<double> gpu_prices(const PlanOptions& o, const std::vector<std::string>& hardware,
                               const std::string& cluster_hardware) {
  const std::string given = o.gpu_price.empty() && o.rank == "cost" ? "list" : o.gpu_price;
  std::vector<double> prices(hardware.size(), 0.0);
  if (given.empty()) return prices;
  if (given == "list") {
    for (size_t i = 0; i < hardware.size(); ++i) {
      const std::string name = hardware[i].empty() ? cluster_hardware : hardware[i];
      prices[i] = load_gpu_price(name).usd_per_gpu_hour;
      if (prices[i] <= 0)
        throw InputError("--gpu-price list", "a hardware JSON with a list price (or --gpu-price USD)",
                         name + " lists no price");
    }
    return prices;
  }
  std::vector<double> listed;
  std::stringstream ss(given);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char* end = nullptr;
    const double v = std::strtod(part.c_str(), &end);
    if (part.empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
      throw InputError("--gpu-price", "USD per GPU-hour > 0, one or one per --hardware, or 'list'",
                       "'" + given + "'");
    listed.push_back(v);
  }
  if (listed.size() != 1 && listed.size() != hardware.size())
    throw InputError("--gpu-price",
                     "one price or one per --hardware (" + std::to_string(hardware.size()) + ")",
                     std::to_string(listed.size()) + " prices");
  for (size_t i = 0; i < prices.size(); ++i) prices[i] = listed.size() == 1 ? listed[0] : listed[i];
  return prices;
}

// Every layout a candidate deploys (co-located, and PD's prefill and decode layouts), once each, in order.
std::vector<Parallel> candidate_layouts(const std::vector<Candidate>& candidates) {
  std::vector<Parallel> out;
  auto add = [&out](const Parallel& p) {
    for (const Parallel& q : out)
      if (q.name() == p.name()) return;
    out.push_back(p);
  };
  for (const Candidate& c : candidates) {
    if (c.pd) add(c.prefill);
    add(c.layout);
  }
  return out;
}

RankBy parse_rank(const std::string& v) {
  if (v == "throughput") return RankBy::kThroughput;
  if (v == "cost") return RankBy::kCost;
  throw InputError("--rank", "throughput or cost", "'" + v + "'");
}

// How far published runs say to trust the ranking's figures on one hardware (calibrate/accuracy_table.h), as
// sim's summary says it: the profile that priced the candidates, or the roofline.
void print_accuracy(const PlanPricing& pricing, const std::string& profile, bool name_hardware) {
  const bool transferred = profile.starts_with("transfer:");
  const std::string kind = pricing.profile == nullptr ? "roofline" : transferred ? "transferred" : "profile";
  const AccuracyNote note =
      accuracy_note(shipped_accuracy_table(),
                    {.hardware = pricing.hardware.name,
                     .engine = pricing.profile != nullptr ? pricing.profile->engine_name : "sglang",
                     .kind = kind,
                     .profile = profile,
                     .model_type = pricing.model.hf_model_type,
                     .model_name = pricing.model.name});
  const std::string label = name_hardware ? "accuracy " + pricing.hardware.name + ": " : "accuracy: ";
  for (size_t i = 0; i < note.lines.size(); ++i)
    std::printf("%s%s\n", i == 0 ? label.c_str() : std::string(label.size(), ' ').c_str(),
                note.lines[i].c_str());
}

void run_plan(const PlanOptions& given) {
  const RankBy rank = parse_rank(given.rank);
  const std::vector<std::string> hardware = hardware_list(given.hardware);
  const bool several = hardware.size() > 1;
  if (!given.shard.empty() && (several || rank == RankBy::kCost || !given.gpu_price.empty()))
    throw InputError("--shard", "one --hardware and no --rank cost / --gpu-price (partials carry no prices)",
                     given.shard);
  const std::vector<double> prices = gpu_prices(
      given, hardware, given.cluster.empty() ? "" : load_cluster_hardware(given.cluster).hardware.name);
  if (given.jobs < 1) throw InputError("--jobs", "a positive count", std::to_string(given.jobs));
  if (given.out.empty()) throw InputError("--out", "an output directory", "nothing");
  const auto [shard, shards] =
      given.shard.empty() ? std::pair<int32_t, int32_t>{1, 1} : parse_shard(given.shard);
  std::vector<PlanSetup> setups;
  std::vector<std::vector<Candidate>> candidates;
  std::vector<PlanPricing> pricings(hardware.size());
  int32_t next_id = 0;
  for (size_t h = 0; h < hardware.size(); ++h) {  // every flag of every hardware judged before a simulation
    PlanOptions o = given;
    o.hardware = hardware[h];
    PlanPricing& pricing = pricings[h];
    PlanSetup setup = build_setup(o, pricing.hardware);
    pricing.model = load_model(o.model, o.weights_format);
    std::vector<Candidate> all = enumerate_candidates(pricing.model, setup.space);
    if (setup.target.profile.empty() && !o.roofline) {
      // The best available, as sim chooses it (cli/time_source_choice.h), once for every candidate: the
      // engine's profile on this GPU where it measures the kernels of every candidate's layouts.
      const TimeSourceChoice choice =
          choose_time_source({}, pricing.model, candidate_layouts(all), pricing.hardware, "");
      setup.target.profile = choice.profile;
      setup.target.profile_defaulted = !choice.profile.empty();
      if (setup.target.profile_defaulted)
        std::fprintf(stderr,
                     "tokenline plan: %s priced by the best available, profile %s (%s); --roofline for the "
                     "seed's model\n",
                     pricing.hardware.name.c_str(), choice.profile.c_str(), choice.why.c_str());
    }
    // Loaded here so that a bad profile is exit 2 before any simulation (each probe loads it again).
    pricing.profile = load_op_profile(setup.target.profile, o.profile_set);
    if (pricing.profile != nullptr && pricing.profile->engine_name == "vllm")
      setup.launch_engine = LaunchEngine::kVllm;
    if (pricing.profile != nullptr && pricing.profile->engine_name == "trtllm")
      setup.launch_engine = LaunchEngine::kTrtllm;
    const std::pair<double, double> rate_range =
        o.rate_range.empty() ? std::pair<double, double>{0, 0} : parse_rate_range(o.rate_range);
    setup.workload = read_workload_profile(o);
    if (rate_range.first > 0) {  // the user's range, searched as given: no widening above it
      if (!(setup.workload.rate_per_s > 0))
        throw InputError("--rate-range", "a workload with an arrival rate to rescale",
                         "all requests at one time");
      setup.search.lo_log2 = std::log2(rate_range.first / setup.workload.rate_per_s);
      setup.search.hi_log2 = std::log2(rate_range.second / setup.workload.rate_per_s);
      setup.search.max_widenings = 0;
    }
    for (Candidate& c : all) c.id += next_id;  // ids stay unique over the hardware
    next_id += static_cast<int32_t>(all.size());
    setup.candidates = static_cast<int32_t>(all.size());
    std::vector<Candidate> mine;
    for (const Candidate& c : all) {
      if (c.id % shards == shard - 1) mine.push_back(c);
    }
    setups.push_back(std::move(setup));
    candidates.push_back(std::move(mine));
  }
  std::filesystem::create_directories(given.out);
  const auto start = std::chrono::steady_clock::now();
  std::vector<PlanRow> rows;
  RunnerStats stats;
  RunnerOptions runner{std::filesystem::read_symlink("/proc/self/exe").string(), given.out + "/probes",
                       given.jobs, ::isatty(STDERR_FILENO) != 0};
  for (size_t h = 0; h < hardware.size(); ++h) {
    std::vector<PlanRow> some = ledger_rows(candidates[h], pricings[h], setups[h]);
    const RunnerStats s = simulate_rows(setups[h], some, runner);
    if (stats.first_failure.empty()) {
      stats.first_failure = s.first_failure;
      stats.first_failure_exit = s.first_failure_exit;
    }
    stats.simulations += s.simulations;
    stats.failed += s.failed;
    for (PlanRow& r : some) {
      if (several) r.hardware = setups[h].hardware_name;
      r.usd_per_gpu_hour = prices[h];
      rows.push_back(std::move(r));
    }
  }
  PlanSetup& setup = setups.front();
  setup.rank = rank;
  if (several) {
    setup.candidates = next_id;
    for (size_t h = 1; h < setups.size(); ++h) setup.hardware_name += "," + setups[h].hardware_name;
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (given.shard.empty()) {
    std::fputs(write_plan_outputs(setup, rows, given.out).c_str(), stdout);
    for (size_t h = 0; h < hardware.size(); ++h)
      print_accuracy(pricings[h], setups[h].target.profile, several);
  } else {
    write_text(
        given.out + "/plan-partial-" + std::to_string(shard) + "-of-" + std::to_string(shards) + ".json",
        partial_json(setup, shard, shards, rows));
  }
  std::fprintf(
      stderr,
      "tokenline plan: %zu of %d candidates evaluated (shard %d/%d), %lld simulations (%lld failed) with "
      "%d jobs in %.1f s; outputs in %s\n",
      rows.size(), setup.candidates, shard, shards, static_cast<long long>(stats.simulations),
      static_cast<long long>(stats.failed), given.jobs, wall_s, given.out.c_str());
  if (stats.all_failed()) {
    // Nothing was measured: a table of candidates that "miss" at 0 ms would hide why. Exit 2 when the
    // simulations refused their input (a layout the model cannot take), else 1.
    std::fprintf(stderr, "tokenline plan: all %lld simulations failed; the first: %s\n",
                 static_cast<long long>(stats.simulations), stats.first_failure.c_str());
    std::exit(stats.first_failure_exit == 2 ? 2 : 1);
  }
}

std::vector<std::string> partial_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    if (!std::filesystem::is_directory(in)) {
      files.push_back(in);
      continue;
    }
    std::set<std::string> found;  // ordered: deterministic
    for (const auto& e : std::filesystem::directory_iterator(in)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("plan-partial-", 0) == 0 && e.path().extension() == ".json")
        found.insert(e.path().string());
    }
    if (found.empty()) throw InputError("plan merge " + in, "plan-partial-*.json files", "none");
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

void run_merge(const PlanOptions& o) {
  if (o.merge_out.empty()) throw InputError("plan merge --out", "an output directory", "nothing");
  std::vector<PlanPartial> parts;
  for (const std::string& f : partial_files(o.merge_inputs)) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw InputError("plan merge " + f, "a readable file", "none");
    std::stringstream ss;
    ss << in.rdbuf();
    parts.push_back(parse_partial(ss.str(), f));
  }
  std::set<int32_t> seen;
  std::vector<PlanRow> rows;
  for (const PlanPartial& p : parts) {
    if (p.setup_text != parts.front().setup_text || p.shards != parts.front().shards)
      throw InputError("plan merge", "partials of one plan (equal setups and shard counts)",
                       "different ones");
    if (!seen.insert(p.shard).second)
      throw InputError("plan merge", "each shard once", "shard " + std::to_string(p.shard) + " twice");
    rows.insert(rows.end(), p.rows.begin(), p.rows.end());
  }
  const int32_t shards = parts.front().shards;
  if (static_cast<int32_t>(seen.size()) != shards ||
      static_cast<int32_t>(rows.size()) != parts.front().setup.candidates)
    throw InputError("plan merge", "all " + std::to_string(shards) + " shards",
                     std::to_string(seen.size()) + " shard(s) with " + std::to_string(rows.size()) + " rows");
  std::fputs(write_plan_outputs(parts.front().setup, rows, o.merge_out).c_str(), stdout);
  std::fprintf(stderr, "tokenline plan merge: %zu shards, %zu candidates; outputs in %s\n", parts.size(),
               rows.size(), o.merge_out.c_str());
}

void add_plan_options(CLI::App& cmd, PlanOptions& o) {
  cmd.add_option("--model", o.model, "model preset or config.json path")->capture_default_str();
  cmd.add_option("--weights-format", o.weights_format,
                 "replace the checkpoint's quantized weight format, as tokenline sim --weights-format");
  cmd.add_option("--cluster", o.cluster, "cluster preset or JSON path (its hardware and GPU count)");
  cmd.add_option(
      "--hardware", o.hardware,
      "hardware preset or JSON path (with --gpus); a comma list plans on each and ranks them together");
  cmd.add_option("--gpus", o.gpus, "GPUs to deploy on (with --hardware)");
  cmd.add_option("--workload", o.workload, "as tokenline sim --workload (default: the embedded trace)");
  cmd.add_option("--slo", o.slo, "latency target on p90 TTFT and p90 TPOT, e.g. ttft=2s,tpot=50ms");
  cmd.add_option("--chunks", o.chunks, "chunk sizes to try (tokens, comma list)")->capture_default_str();
  cmd.add_option("--max-running-set", o.max_running, "max running requests per rank to try (comma list)")
      ->capture_default_str();
  cmd.add_flag("--no-pd", o.no_pd, "co-located candidates only (no prefill/decode pools)");
  cmd.add_option("--probes", o.probes, "simulations per candidate in the rate search")->capture_default_str();
  cmd.add_option("--rate-range", o.rate_range,
                 "the rate search's range LO:HI in req/s (default: 1/32 to 8x the workload's rate, widened "
                 "up to 4096x while a candidate meets the SLO at the top)");
  cmd.add_option("--max-requests", o.max_requests, "simulate only the first N requests (0: all)");
  cmd.add_option("--seed", o.seed, "seed for generated workloads")->capture_default_str();
  cmd.add_option("--jobs", o.jobs, "simulations in parallel (child processes)")->capture_default_str();
  cmd.add_option("--shard", o.shard, "evaluate slice k of N (k/N) and write a partial result for plan merge");
  cmd.add_option("--out", o.out, "output directory (plan.csv, plan.json, pareto.svg; partials with --shard)");
  cmd.add_option("--profile", o.profile,
                 "price every candidate from an op profile and its engine, as tokenline sim --profile "
                 "(h200-sglang, h200-vllm, or a directory; default: the best available, as tokenline sim "
                 "chooses it)");
  cmd.add_option(
      "--engine", o.engine,
      "sglang | vllm | trtllm: price with that engine's profile on --hardware (<hardware>-<engine>)");
  cmd.add_option("--profile-set", o.profile_set,
                 "override the profile's timing parameters: name=value[,...]");
  cmd.add_flag("--roofline", o.roofline,
               "price every candidate by the roofline and the seed's engine instead of the best available "
               "profile");
  cmd.add_option("--rank", o.rank,
                 "rank the candidates meeting the SLO by throughput (per GPU) or cost ($ per million output "
                 "tokens; with several --hardware h200,b200 the cheapest hardware wins)")
      ->capture_default_str();
  cmd.add_option("--gpu-price", o.gpu_price,
                 "USD per GPU-hour (one, or one per --hardware), or 'list': the hardware JSON's list price "
                 "(the default with --rank cost)");
}

void add_plan(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan",
                                     "search deployments (layout, instances, PD, chunk, max running) "
                                     "for the highest SLO-meeting rate, by simulation");
  add_plan_options(*cmd, *o);
  CLI::App* merge = cmd->add_subcommand("merge", "join the partial results of plan --shard runs");
  merge->add_option("inputs", o->merge_inputs, "output directories or plan-partial-*.json files")->required();
  merge->add_option("--out", o->merge_out, "output directory for the merged plan")->required();
  merge->callback([o] { run_merge(*o); });
  cmd->callback([o, merge] {
    if (!merge->parsed()) run_plan(*o);
  });
}

const CommandRegistration kRegistration("plan", add_plan);

}  // namespace
}  // namespace tokenline::cli
