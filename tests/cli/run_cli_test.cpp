// `tokenline run` and `tokenline sim --backend replay:<trace.json>` as separate processes: the replay
// reproduces the real run's decisions (batches entry by entry, preemptions, prefix hits), a perturbed
// recording is reported at its step, rank and entry, bad checkpoints and a missing GPU are one clear
// InputError (exit 2).
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "engine/runtime/model_weights.h"
#include "tests/traces/prefix_group_workload.h"
#include "tests/traces/test_dir.h"
#include "traces/trace_reader.h"

using namespace tokenline;
using testing::read_all;
namespace fs = std::filesystem;

namespace {

constexpr int kPageTokens = 16;
// A pool of 12 pages x 16 tokens holds ~3 of these requests: the burst at time 0 preempts (incremental
// reservation), whatever the step times are.
const std::string kBaseFlags =
    " --model glm-5.3-tiny --page-size 16 --reservation incremental --max-running 64";
const std::string kModelFlags = kBaseFlags + " --kv-pages 12";
const std::string kSchedulerFlags = kModelFlags + " --chunk 64";

struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / ("tokenline_runtime_" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

struct Result {
  int exit_code = -1;
  std::string err;
};

Result run_tokenline(const std::string& args, const Scratch& s) {
  const std::string err = s.file("stderr.txt");
  const int status = std::system(
      (std::string("'") + TOKENLINE_BINARY + "' " + args + " >/dev/null 2>'" + err + "'").c_str());
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(err)};
}

std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_all(path));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ',')) fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

// Per-step batch detail of a trace: step spans (ts, dur, step, tokens, requests, the rank's batch entries),
// every prefill chunk span (request id, chunk name, ts, tokens, context) and every "queued" span begin
// (arrival, and each preemption), in file order.
std::vector<std::string> batch_detail(const std::string& trace_path, std::vector<std::string>* op_names) {
  const nlohmann::json doc = nlohmann::json::parse(read_all(trace_path));
  std::vector<std::string> out;
  for (const auto& e : doc["traceEvents"]) {
    const std::string name = e.value("name", ""), ph = e.value("ph", "");
    if (ph == "X" && name == "step") {
      out.push_back("step " + e["args"]["step"].dump() + " ts " + e["ts"].dump() + " dur " + e["dur"].dump() +
                    " tokens " + e["args"]["tokens"].dump() + " requests " + e["args"]["requests"].dump() +
                    " batch " + e["args"].value("batch", "-"));
    } else if (ph == "X" && op_names != nullptr) {
      op_names->push_back(name);
    } else if (ph == "b" && name.rfind("prefill chunk", 0) == 0) {
      out.push_back("request " + e["id"].dump() + " " + name + " ts " + e["ts"].dump() + " " +
                    e["args"].dump());
    } else if (ph == "b" && name == "queued") {
      out.push_back("request " + e["id"].dump() + " queued ts " + e["ts"].dump());
    }
  }
  return out;
}

// What a real run's batches show: every working rank's span lists its entries; some request prefills
// again after it decoded (it was preempted and recomputes), some request's first chunk starts after
// cached tokens (a prefix hit).
void check_recorded_batches(const std::string& trace_path) {
  const RecordedRun run = read_recorded_run(trace_path);
  std::set<int64_t> seen, decoded;
  int64_t entries = 0, recomputed = 0, hits = 0;
  for (const RecordedInstance& inst : run.instances) {
    for (const RecordedStep& step : inst.steps) {
      for (const RecordedRankStep& rank : step.ranks) {
        CHECK((rank.has_batch || rank.requests == 0));
        for (const RecordedEntry& e : rank.batch) {
          ++entries;
          if (!e.prefill) decoded.insert(e.id);
          if (e.prefill && decoded.erase(e.id) > 0) ++recomputed;
          if (e.prefill && seen.insert(e.id).second && e.context_tokens > 0) ++hits;
        }
      }
    }
  }
  CHECK(entries > 100);
  CHECK(recomputed > 0);
  CHECK(hits > 0);
}

// Runs the workload for real with `flags` (and `run_flags`), replays its trace in the simulator with
// `flags` and --parallel `parallel`, and compares every request row and every step's batch detail.
// A random checkpoint whose MTP layer echoes the main model: eh_proj passes the main hidden state, the
// MTP decoder layer adds nothing (zero o_proj and down projections) and its head norm is the final norm, so
// each draft is the token just emitted - it stands whenever the model repeats a token.
void write_echo_mtp_checkpoint(const std::string& path) {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  ModelWeights w = ModelWeights::random(shape, 0);
  const std::string mtp = "model.layers." + std::to_string(shape.layers) + ".";
  auto tensor = [&](const std::string& name) -> std::vector<float>& {
    for (size_t i = 0; i < w.specs().size(); ++i)
      if (w.specs()[i].name == name) return w.tensor(i);
    FAIL("no tensor " << name);
    throw;
  };
  const auto h = static_cast<size_t>(shape.hidden);
  std::vector<float>& eh = tensor(mtp + "eh_proj.weight");  // [h, 2h]
  std::fill(eh.begin(), eh.end(), 0.0f);
  for (size_t i = 0; i < h; ++i) eh[i * 2 * h + h + i] = 1.0f;
  for (const char* zero :
       {"self_attn.o_proj.weight", "mlp.experts.down_proj", "mlp.shared_experts.down_proj.weight"}) {
    std::vector<float>& t = tensor(mtp + zero);
    std::fill(t.begin(), t.end(), 0.0f);
  }
  std::vector<float>& hnorm = tensor(mtp + "hnorm.weight");
  std::fill(hnorm.begin(), hnorm.end(), 1.0f);
  tensor(mtp + "shared_head.norm.weight") = tensor("model.norm.weight");
  w.save(path);
}

// With echo_mtp, the real run uses that checkpoint and some decode must have accepted its draft.
// With host_tier, some prefix must have come back from the host tier, and both runs' tier totals agree.
void check_equivalence(const std::string& name, const std::string& flags, const std::string& run_flags,
                       const std::string& parallel, bool echo_mtp = false, bool host_tier = false) {
  Scratch s(name);
  testing::write_prefix_group_workload(s.file("w.jsonl"), kPageTokens);
  std::string weights;
  if (echo_mtp) {
    write_echo_mtp_checkpoint(s.file("echo_mtp.safetensors"));
    weights = " --weights " + s.file("echo_mtp.safetensors");
  }
  const Result real = run_tokenline(
      "run --workload " + s.file("w.jsonl") + " --out " + s.file("real") + flags + run_flags + weights, s);
  INFO(real.err);
  REQUIRE(real.exit_code == 0);
  const Result sim = run_tokenline("sim --backend replay:" + s.file("real/trace.json") + " --parallel " +
                                       parallel + " --trace-detail op --workload " + s.file("w.jsonl") +
                                       " --out " + s.file("sim") + flags,
                                   s);
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  CHECK(sim.err.find("tokenline sim: step times from the recorded run (replay)\n") != std::string::npos);

  const auto real_rows = csv_rows(s.file("real/requests.csv")),
             sim_rows = csv_rows(s.file("sim/requests.csv"));
  REQUIRE(real_rows.size() == 17);
  REQUIRE(sim_rows == real_rows);  // ids, times, cached tokens, preemptions, status: every field
  int64_t preemptions = 0, cached = 0;
  for (size_t i = 1; i < real_rows.size(); ++i) {
    cached += std::stoll(real_rows[i][6]);
    preemptions += std::stoll(real_rows[i][7]);
  }
  CHECK(preemptions > 0);  // the workload exercises preemption ...
  CHECK(cached > 0);       // ... and prefix hits

  std::vector<std::string> real_ops, sim_ops;
  check_recorded_batches(s.file("real/trace.json"));
  const auto real_steps = batch_detail(s.file("real/trace.json"), &real_ops);
  const auto sim_steps = batch_detail(s.file("sim/trace.json"), &sim_ops);
  CHECK(real_steps.size() > 16);
  CHECK(sim_steps == real_steps);
  CHECK(sim_ops == real_ops);
  CHECK(std::find(real_ops.begin(), real_ops.end(), "sparse_mla") != real_ops.end());
  if (echo_mtp) {
    int64_t accepted = 0, verified = 0;
    const RecordedRun real_run = read_recorded_run(s.file("real/trace.json"));
    for (const RecordedStep& step : real_run.instances.at(0).steps) {
      for (const RecordedRankStep& rank : step.ranks) {
        for (const RecordedEntry& e : rank.batch) {
          verified += e.accepted >= 0 ? 1 : 0;
          accepted += std::max(e.accepted, 0);
        }
      }
    }
    INFO("verified " << verified << " drafts, accepted " << accepted);
    CHECK(accepted > 0);
    CHECK(accepted < verified);
    CHECK(std::find(real_ops.begin(), real_ops.end(), "mtp_draft") != real_ops.end());
  }

  // tokenline compare of the replay against the run: the same decisions, step and op times equal (the
  // replay's are the run's), and request by request the same outcomes and latencies.
  const Result compared =
      run_tokenline("compare " + s.file("sim/trace.json") + " " + s.file("real/trace.json") +
                        " --json --out " + s.file("compare.json"),
                    s);
  REQUIRE(compared.exit_code == 0);
  const auto comparison = nlohmann::json::parse(read_all(s.file("compare.json")));
  CHECK(comparison["decisions"]["same"] == true);
  CHECK(comparison["steps"]["predicted_only"] == 0);
  CHECK(comparison["step"]["relative_error"]["mape"].get<double>() == 0.0);
  for (const auto& op : comparison["ops"]) {
    INFO(op.dump());
    CHECK(op["ratio"].get<double>() == Approx(1.0).epsilon(1e-12));
  }
  const auto& requests = comparison["requests"];
  CHECK(requests["joined"] == 16);
  CHECK(requests["outcomes_differ"]["cached_tokens"] == 0);
  CHECK(requests["outcomes_differ"]["preemptions"] == 0);
  CHECK(requests["ttft"]["relative_error"]["mape"].get<double>() == 0.0);
  CHECK(requests["e2e"]["relative_error"]["mape"].get<double>() == 0.0);

  const auto metrics = nlohmann::json::parse(read_all(s.file("sim/metrics.json")));
  CHECK(metrics["run"]["backend"] == "replay");
  CHECK(metrics["run"]["parallelism"] == parallel);
  CHECK(metrics.contains("kv_tiers") == host_tier);
  if (host_tier) {
    const auto real_metrics = nlohmann::json::parse(read_all(s.file("real/metrics.json")));
    const auto& real_tiers = real_metrics["kv_tiers"];
    INFO(real_tiers.dump());
    CHECK(real_tiers["host_hit_tokens"].get<int64_t>() > 0);
    CHECK(real_tiers["bytes_host_to_hbm"].get<int64_t>() > 0);
    // Pages and tokens, not bytes: the simulator sizes a page by the model's KV layout, the CPU engine by
    // its buffers.
    for (const char* key : {"lookup_tokens", "hbm_hit_tokens", "host_hit_tokens", "host_cached_pages",
                            "host_evicted_pages", "steps_with_transfers"})
      CHECK(metrics["kv_tiers"][key] == real_tiers[key]);
    // The copies' measured times, read back from the trace's kv_*_host spans (written to the nanosecond).
    for (const char* key : {"load_s", "store_s", "stall_s"})
      CHECK(metrics["kv_tiers"][key].get<double>() == Approx(real_tiers[key].get<double>()).epsilon(1e-3));
  }
}

}  // namespace

TEST_CASE(
    "decision equivalence: a replay of a real run's trace reproduces its batches, preemptions and hits") {
  check_equivalence("equivalence", kSchedulerFlags, "", "tp1");
}

TEST_CASE("decision equivalence with a host KV tier whose pages are copied out and back") {
  check_equivalence("equivalence_host", kSchedulerFlags + " --kv-host-ratio 4", "", "tp1", false, true);
}

TEST_CASE("decision equivalence with a write_back host tier on a dp2-tp2-ep4 split") {
  check_equivalence("equivalence_host_wb",
                    kBaseFlags + " --chunk 64 --kv-pages 8 --kv-host-ratio 3 --kv-write-policy write_back",
                    " --parallel dp2-tp2-ep4", "dp2-tp2-ep4", false, true);
}

TEST_CASE("decision equivalence with attention DP over two ranks, each with its own KV pool") {
  // 8 pages per rank: the 6 requests of each rank's share of the burst preempt there too.
  check_equivalence("equivalence_dp2", kBaseFlags + " --chunk 64 --kv-pages 8", " --parallel dp2", "dp2");
}

TEST_CASE("decision equivalence with the model split over 8 threads: dp2-tp2-ep4 (TP groups, DP, EP)") {
  check_equivalence("equivalence_sharded", kBaseFlags + " --chunk 64 --kv-pages 8", " --parallel dp2-tp2-ep4",
                    "dp2-tp2-ep4");
}

TEST_CASE(
    "decision equivalence with MTP drafts: the replay takes each decode's accepted drafts from the trace") {
  check_equivalence("equivalence_mtp", kSchedulerFlags + " --mtp 1", "", "tp1", true);
}

TEST_CASE("decision equivalence with two chained MTP drafts per decode on a dp2-ep2 split") {
  check_equivalence("equivalence_mtp2", kBaseFlags + " --chunk 64 --kv-pages 8 --mtp 2",
                    " --parallel dp2-ep2", "dp2-ep2", true);
}

TEST_CASE("a replay of another configuration's trace is reported as a divergence (exit 1)") {
  Scratch s("divergence");
  testing::write_prefix_group_workload(s.file("w.jsonl"), kPageTokens);
  REQUIRE(
      run_tokenline("run --workload " + s.file("w.jsonl") + " --out " + s.file("real") + kSchedulerFlags, s)
          .exit_code == 0);
  const Result sim =
      run_tokenline("sim --backend replay:" + s.file("real/trace.json") + " --parallel tp1 --workload " +
                        s.file("w.jsonl") + " --out " + s.file("sim") + kModelFlags + " --chunk 32",
                    s);
  CHECK(sim.exit_code == 1);
  CHECK(sim.err.find("diverged") != std::string::npos);
  const Result missing = run_tokenline("sim --backend replay:" + s.file("nope.json") +
                                           " --parallel tp1 --model glm-5.3-tiny --workload " +
                                           s.file("w.jsonl") + " --out " + s.file("sim2"),
                                       s);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("nope.json") != std::string::npos);
}

namespace {

// A recorded step span, one line of trace.json, and the batch it lists.
struct StepLine {
  size_t line = 0;
  int64_t step = 0;
  int64_t rank = 0;
  std::string batch;
  std::vector<RecordedEntry> entries;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first step span with a batch for which `pick` gives an entry index to perturb (-1: none).
template <typename Pick>
StepLine find_step_line(const std::vector<std::string>& lines, Pick pick, int64_t* index) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("\"name\":\"step\"") == std::string::npos) continue;
    const std::string body = lines[i].back() == ',' ? lines[i].substr(0, lines[i].size() - 1) : lines[i];
    const auto e = nlohmann::json::parse(body);
    if (!e["args"].contains("batch")) continue;
    StepLine s{i, e["args"]["step"].get<int64_t>(), e["tid"].get<int64_t>() / 2, e["args"]["batch"], {}};
    REQUIRE(parse_batch(s.batch, &s.entries));
    if ((*index = pick(s.entries)) >= 0) return s;
  }
  FAIL("no step span to perturb");
  return {};
}

// Replays `real` with one step span's batch replaced by `perturbed`; checks the divergence names that
// step, its rank and the first entry that differs (`recorded`, the perturbed one, and `planned`).
void check_perturbed(const Scratch& s, const std::string& real, const StepLine& at,
                     const std::string& perturbed, int64_t entry, const std::string& recorded,
                     const std::string& planned) {
  std::vector<std::string> lines = lines_of(real);
  const std::string from = "\"batch\":\"" + at.batch + "\"", to = "\"batch\":\"" + perturbed + "\"";
  const size_t pos = lines[at.line].find(from);
  REQUIRE(pos != std::string::npos);
  lines[at.line].replace(pos, from.size(), to);
  std::ofstream out(s.file("perturbed.json"));
  for (const std::string& line : lines) out << line << "\n";
  out.close();
  const Result sim = run_tokenline("sim --backend replay:" + s.file("perturbed.json") +
                                       " --parallel tp1 --trace-detail op --workload " + s.file("w.jsonl") +
                                       " --out " + s.file("sim") + kSchedulerFlags,
                                   s);
  INFO(sim.err);
  CHECK(sim.exit_code == 1);
  CHECK(sim.err.find("diverged") != std::string::npos);
  CHECK(sim.err.find("step " + std::to_string(at.step) + " rank " + std::to_string(at.rank) + " entry " +
                     std::to_string(entry) + ": recorded " + recorded + ", planned " + planned) !=
        std::string::npos);
}

}  // namespace

TEST_CASE("a replay of a real trace with one batch perturbed names the step, rank and entry (exit 1)") {
  Scratch s("perturbed");
  testing::write_prefix_group_workload(s.file("w.jsonl"), kPageTokens);
  REQUIRE(
      run_tokenline("run --workload " + s.file("w.jsonl") + " --out " + s.file("real") + kSchedulerFlags, s)
          .exit_code == 0);
  const std::string real = read_all(s.file("real/trace.json"));
  const std::vector<std::string> lines = lines_of(real);
  int64_t entry = -1;

  // Two entries swapped: the same tokens and requests, so only the entry-by-entry check sees it.
  const StepLine two = find_step_line(
      lines,
      [](const std::vector<RecordedEntry>& b) -> int64_t {
        return b.size() >= 2 && !(b[0] == b[1]) ? 0 : -1;
      },
      &entry);
  std::vector<RecordedEntry> swapped = two.entries;
  std::swap(swapped[0], swapped[1]);
  std::string text;
  for (const RecordedEntry& e : swapped) append_batch_entry(text, e);
  check_perturbed(s, real, two, text, 0, to_string(two.entries[1]), to_string(two.entries[0]));

  // A prefix hit taken away: the chunk's context set to 0, its tokens unchanged.
  const StepLine hit = find_step_line(
      lines,
      [](const std::vector<RecordedEntry>& b) -> int64_t {
        for (size_t i = 0; i < b.size(); ++i)
          if (b[i].prefill && b[i].context_tokens > 0) return static_cast<int64_t>(i);
        return -1;
      },
      &entry);
  std::vector<RecordedEntry> missed = hit.entries;
  missed[static_cast<size_t>(entry)].context_tokens = 0;
  text.clear();
  for (const RecordedEntry& e : missed) append_batch_entry(text, e);
  check_perturbed(s, real, hit, text, entry, to_string(missed[static_cast<size_t>(entry)]),
                  to_string(hit.entries[static_cast<size_t>(entry)]));
}

TEST_CASE("tokenline run: a bad checkpoint is one InputError naming the tensor (exit 2), no crash") {
  Scratch s("bad_checkpoint");
  testing::write_prefix_group_workload(s.file("w.jsonl"), kPageTokens);
  ModelShape shape = load_model_shape("glm-5.3-tiny");
  ModelWeights::random(shape, 1).save(s.file("good.safetensors"));
  shape.vocab = 300;  // embed_tokens and lm_head rows differ from the model's 512
  ModelWeights::random(shape, 1).save(s.file("bad.safetensors"));
  const Result bad = run_tokenline("run --weights " + s.file("bad.safetensors") + " --workload " +
                                       s.file("w.jsonl") + " --out " + s.file("out") + kSchedulerFlags,
                                   s);
  INFO(bad.err);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("model.embed_tokens.weight") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  CHECK(!fs::exists(s.file("out/metrics.json")));
  const Result good =
      run_tokenline("run --weights " + s.file("good.safetensors") + " --max-requests 3 --workload " +
                        s.file("w.jsonl") + " --out " + s.file("out") + kSchedulerFlags,
                    s);
  INFO(good.err);
  CHECK(good.exit_code == 0);
  CHECK(fs::exists(s.file("out/metrics.json")));
}

TEST_CASE("tokenline run --backend cuda without a usable device is one clear message, exit 2") {
  Scratch s("cuda");
  testing::write_prefix_group_workload(s.file("w.jsonl"), kPageTokens);
  const Result r =
      run_tokenline("run --backend cuda --workload " + s.file("w.jsonl") + " --out " + s.file("out"), s);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--backend cuda") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("tokenline run --slo: goodput in metrics.json as for tokenline sim, and a bad SLO is exit 2") {
  Scratch s("slo");
  const std::string base =
      "run --model glm-5.3-tiny --kv-pages 64 --workload "
      "synthetic:n=4,rate=1000,input=fixed:32,output=fixed:4,seed=1 --out ";
  REQUIRE(run_tokenline(base + s.file("loose") + " --slo ttft=1000s,tpot=1000s", s).exit_code == 0);
  REQUIRE(run_tokenline(base + s.file("tight") + " --slo ttft=0.001ms", s).exit_code == 0);
  const auto loose = nlohmann::json::parse(read_all(s.file("loose/metrics.json")));
  const auto tight = nlohmann::json::parse(read_all(s.file("tight/metrics.json")));
  CHECK(loose["goodput"]["good_requests"] == 4);
  CHECK(loose["goodput"]["slo_ttft_ms"] == 1e6);
  CHECK(tight["goodput"]["good_requests"] == 0);  // no prefill takes under a microsecond
  const Result bad = run_tokenline(base + s.file("bad") + " --slo ttft=soon", s);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--slo ttft") != std::string::npos);
}

TEST_CASE("run with a bad engine flag and an existing --out leaves that directory byte-identical",
          "[run_cli]") {
  Scratch s("run_typo_keeps_out");
  const std::string out = s.file("o");
  const std::string workload = "synthetic:n=4,rate=100,input=fixed:32,output=fixed:4,seed=1";
  REQUIRE(run_tokenline("run --workload '" + workload + "'" + kSchedulerFlags + " --out '" + out + "'", s)
              .exit_code == 0);
  const auto before = testing::dir_snapshot(out);
  REQUIRE(before.count("metrics.json") == 1);
  for (const std::string& bad : {std::string(" --chunk 0"), std::string(" --kv-pages -1"),
                                 std::string(" --backend gpu-that-is-not")}) {
    CAPTURE(bad);
    const auto r = run_tokenline(
        "run --workload '" + workload + "'" + kSchedulerFlags + bad + " --out '" + out + "'", s);
    CHECK(r.exit_code == 2);
    CHECK(testing::dir_snapshot(out) == before);
  }
}
