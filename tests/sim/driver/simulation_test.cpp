// Whole runs of `tokenline sim` as separate processes: determinism, conservation, and the seed article's
// operating points coming out of a simulation (not only out of the ledger).
#include "sim/driver/simulation.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>

#include "cost/memory.h"
#include "tests/cli/tokenline_process.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

using testing::read_all;
using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

constexpr int64_t kContext128k = 131072;     // the seed's 128K example
constexpr int64_t kContext1m = 1048576;      // GLM-5.3's 1M context
constexpr int64_t kChunkTokens = 32768;      // SGLang's chunk; the seed: 1M = 32 chunks
constexpr int kSeedBatch = 32;               // the seed's batch-32 example (requests per attention rank)
constexpr int kDpRanks = 8;                  // dp8-ep8 on 8xH200
constexpr double kSeedStepS = 23e-3 / 0.85;  // the seed: weight reads ~23 ms are ~85% of the step (~27 ms)
constexpr double kSeedWeightsShare = 0.85;
constexpr int kSeedMaxKvHolders = 4;  // the seed: 8xH200 holds KV of only 4 1M requests at once

CostModel glm_cost_model(const char* parallel, bool ideal) {
  CostOptions options;
  options.ideal = ideal;
  const ModelConfig model = model_preset("glm-5.3");
  return make_cost_model(model, parse_parallel(parallel, "test"), model.default_kv_layout,
                         load_hardware("h200"), options);
}

std::string sim_args(const std::string& workload, const std::string& out, const std::string& extra) {
  // The seed's model (tokenline sim's default time source would be the shipped h200-sglang profile).
  return "sim --roofline --workload '" + workload + "' --out '" + out + "' " + extra;
}

TEST_CASE("the same command twice gives byte-identical outputs", "[simulation]") {
  TestDir dir("sim_determinism");
  const std::string workload = testing::source_file("workloads/data/mooncake_conversation_head.jsonl");
  for (const char* out : {"a", "b"}) {
    const auto r =
        run_tokenline(sim_args(workload, dir.file(out), "--cluster h200x8 --trace-detail op"), dir);
    REQUIRE(r.exit_code == 0);
  }
  for (const char* file : {"metrics.json", "requests.csv", "trace.json"}) {
    INFO(file);
    const std::string a = read_all(dir.file(std::string("a/") + file));
    CHECK(a.size() > 100);
    CHECK(a == read_all(dir.file(std::string("b/") + file)));
  }
}

// Each request's async spans: "request <id>" encloses "queued", every "prefill chunk N" and "decode".
void check_request_spans_nest(const nlohmann::json& trace) {
  std::map<int64_t, std::pair<double, double>> request_span;
  std::map<int64_t, std::vector<std::pair<std::string, double>>> events;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "b" && e["ph"] != "e") continue;
    const int64_t id = e["id"];
    const double ts = e["ts"];
    if (e["name"] == "request " + std::to_string(id)) {
      (e["ph"] == "b" ? request_span[id].first : request_span[id].second) = ts;
    } else {
      events[id].emplace_back(e["ph"].get<std::string>() + ":" + e["name"].get<std::string>(), ts);
    }
  }
  REQUIRE_FALSE(request_span.empty());
  for (const auto& [id, list] : events) {
    const auto [begin, end] = request_span.at(id);
    int open = 0;
    for (const auto& [what, ts] : list) {
      CHECK(ts >= begin);
      CHECK(ts <= end);
      open += what[0] == 'b' ? 1 : -1;
      CHECK(open >= 0);
    }
    CHECK(open == 0);
  }
}

TEST_CASE("quickstart writes the three outputs from any directory and request spans nest", "[simulation]") {
  TestDir dir("sim_quickstart");
  const std::string command =
      "cd '" + dir.path().string() + "' && '" + TOKENLINE_BINARY + "' quickstart --out q";
  REQUIRE(std::system((command + " 2>/dev/null").c_str()) == 0);
  const auto m = read_json(dir.file("q/metrics.json"));
  CHECK(m["requests"]["arrived"] == 200);  // the embedded 200-request head of the Mooncake trace
  CHECK(m["requests"]["completed"] == 200);
  CHECK(m["run"]["model"] == "glm-5.3");
  CHECK(m["run"]["parallelism"] == "dp8-ep8");
  CHECK_FALSE(m["run"].contains("wall_s"));
  CHECK(testing::read_csv_rows(dir.file("q/requests.csv")).size() == 200);
  const auto trace = read_json(dir.file("q/trace.json"));
  check_request_spans_nest(trace);
  std::map<std::string, int> counters;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C") ++counters[e["name"]];
  }
  CHECK(counters["requests"] > 0);
  CHECK(counters["kv_pages"] > 0);
  CHECK(counters["batch_tokens"] > 0);
}

TEST_CASE("every arrival completes or is rejected with a reason and preempted requests finish",
          "[simulation]") {
  TestDir dir("sim_conservation");
  const std::string workload = dir.file("w.jsonl");
  testing::write_uniform_workload(workload, 40, 0.0, 6000, 1000);
  {
    std::ofstream more(workload, std::ios::app);
    more
        << "{\"arrival_s\": 0.5, \"input_tokens\": 2000000, \"output_tokens\": 10}\n";  // over the 1M context
  }
  // A small pool forces preemptions under incremental reservation: 200 pages x 64 tokens hold two 6000-token
  // prompts (188 pages) but not both requests' 1000 output tokens (2 x 110 pages).
  const auto r = run_tokenline(
      sim_args(workload, dir.file("o"), "--parallel tp8 --kv-pages 200 --reservation incremental"), dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  const auto& req = m["requests"];
  CHECK(req["arrived"] == 41);
  CHECK(req["completed"].get<int64_t>() + req["rejected"].get<int64_t>() == 41);
  CHECK(req["rejected_by_reason"].size() == 1);
  CHECK(req["rejected"] == 1);
  CHECK(req["preemptions"].get<int64_t>() > 0);
  int preempted_rows = 0;
  for (const auto& row : testing::read_csv_rows(dir.file("o/requests.csv"))) {
    if (std::stoi(row[7]) > 0) {
      ++preempted_rows;
      CHECK(row[9] == "completed");
    }
  }
  CHECK(preempted_rows == req["preempted"].get<int>());
}

TEST_CASE("instances with their own layouts share a workload through the router", "[simulation]") {
  TestDir dir("sim_heterogeneous");
  const auto r = run_tokenline(
      "sim --cluster h200x16-ib --parallel tp8-ep8,dp8-ep8 --router round-robin --max-requests 60 --out '" +
          dir.file("o") + "'",
      dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["run"]["parallelism"] == "tp8-ep8,dp8-ep8");
  CHECK(m["run"]["instances"] == 2);
  REQUIRE(m["instances"].size() == 2);
  for (const auto& instance : m["instances"]) CHECK(instance["steps"].get<int64_t>() > 0);
  // Each instance sizes its own pool: tp8 splits KV over 8 GPUs, dp8 keeps it whole on each rank.
  CHECK(m["instances"][0]["kv_pages"]["capacity"] != m["instances"][1]["kv_pages"]["capacity"]);
  int per_instance[2] = {0, 0};
  for (const auto& row : testing::read_csv_rows(dir.file("o/requests.csv")))
    ++per_instance[std::stoi(row[8])];
  CHECK(per_instance[0] == 30);  // round-robin: every other request
  CHECK(per_instance[1] == 30);
}

TEST_CASE("the closed loop keeps at most N requests in flight and sends the next when one leaves",
          "[simulation]") {
  TestDir dir("sim_closed_loop");
  const std::string workload = dir.file("w.jsonl");
  constexpr int kRequests = 30;
  constexpr int kConcurrency = 4;
  testing::write_uniform_workload(workload, kRequests, 0.0, 2000, 50);
  {
    std::ofstream late(workload,
                       std::ios::app);  // a trace time far in the future: the closed loop ignores it
    late << "{\"arrival_s\": 100000.0, \"input_tokens\": 2000, \"output_tokens\": 50}\n";
  }
  const auto r = run_tokenline(
      sim_args(workload, dir.file("o"), "--parallel tp8 --concurrency " + std::to_string(kConcurrency)), dir);
  REQUIRE(r.exit_code == 0);
  const auto trace = read_json(dir.file("o/trace.json"));
  int64_t max_in_flight = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "C" || e["name"] != "requests") continue;
    max_in_flight =
        std::max(max_in_flight, e["args"]["running"].get<int64_t>() + e["args"]["waiting"].get<int64_t>());
  }
  CHECK(max_in_flight == kConcurrency);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["requests"]["completed"] == kRequests + 1);
  CHECK(m["run"]["simulated_s"].get<double>() < 1000.0);
}

// The seed's "batch 32, 128K context, one decode step" table: TP8 + EP8 + DP attention, 32 requests on
// every attention rank, the seed's ideal rates. The pool is enlarged (--kv-pages) because the table
// ignores capacity: 32 x 128K tokens do not fit one rank's HBM. Ranks prefill their requests one after the
// other while the earlier ones decode; 200 output tokens outlast the 31 x 4 later chunk steps, so the
// last steps decode all 32 requests of a rank together.
TEST_CASE("a batch-32 128K decode step takes about 27 ms with 85% of it weight reads", "[simulation][seed]") {
  TestDir dir("sim_seed_decode");
  const std::string workload = dir.file("w.jsonl");
  constexpr int64_t kOutputTokens = 200;
  testing::write_uniform_workload(workload, kSeedBatch * kDpRanks, 0.0, kContext128k, kOutputTokens);
  const int64_t pages = kSeedBatch * ((kContext128k + kOutputTokens + 63) / 64);
  const auto r = run_tokenline(
      sim_args(workload, dir.file("o"), "--parallel dp8-ep8 --ideal --kv-pages " + std::to_string(pages)),
      dir);
  REQUIRE(r.exit_code == 0);
  const auto trace = read_json(dir.file("o/trace.json"));
  const nlohmann::json* last_full_decode = nullptr;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "step" && e["args"].contains("weights_ns") &&
        e["args"]["tokens"] == kSeedBatch && e["args"]["requests"] == kSeedBatch) {
      last_full_decode = &e;
    }
  }
  REQUIRE(last_full_decode != nullptr);
  const double step_s = (*last_full_decode)["dur"].get<double>() * 1e-6;
  const double weights_s = (*last_full_decode)["args"]["weights_ns"].get<double>() * 1e-9;
  const StepCost ledger = decode_step(glm_cost_model("dp8-ep8", true), kSeedBatch, kContext128k);
  CHECK(step_s == Approx(ledger.total_s).epsilon(1e-3));  // the simulated step is the ledger's step
  CHECK(step_s == Approx(kSeedStepS).epsilon(0.10));
  CHECK(weights_s / step_s == Approx(kSeedWeightsShare).margin(0.05));
}

// Async spans "prefill chunk N" of request 0, in chunk order.
std::vector<double> chunk_durations_s(const nlohmann::json& trace) {
  std::map<std::string, double> begin_us;
  std::map<int, double> durations;
  for (const auto& e : trace["traceEvents"]) {
    if ((e["ph"] != "b" && e["ph"] != "e") || e["id"] != 0) continue;
    const std::string name = e["name"];
    if (name.rfind("prefill chunk ", 0) != 0) continue;
    if (e["ph"] == "b") {
      begin_us[name] = e["ts"].get<double>();
    } else {
      durations[std::stoi(name.substr(14))] = (e["ts"].get<double>() - begin_us[name]) * 1e-6;
    }
  }
  std::vector<double> out;
  for (const auto& [index, d] : durations) out.push_back(d);
  return out;
}

TEST_CASE("a 1M request's TTFT is the sum of its 32 chunk times and each chunk is slower than the last",
          "[simulation][seed]") {
  TestDir dir("sim_seed_1m");
  const std::string workload = dir.file("w.jsonl");
  constexpr int64_t kOutputTokens = 16;
  testing::write_uniform_workload(workload, 1, 0.0, kContext1m - kOutputTokens, kOutputTokens);
  const auto r = run_tokenline(sim_args(workload, dir.file("o"), "--parallel tp8-ep8"), dir);
  REQUIRE(r.exit_code == 0);
  const std::vector<double> chunks = chunk_durations_s(read_json(dir.file("o/trace.json")));
  REQUIRE(chunks.size() == kContext1m / kChunkTokens);
  double sum_s = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    sum_s += chunks[i];
    if (i > 0) CHECK(chunks[i] > chunks[i - 1]);
  }
  const auto rows = testing::read_csv_rows(dir.file("o/requests.csv"));
  REQUIRE(rows.size() == 1);
  const double ttft_s = std::stod(rows[0][2]) - std::stod(rows[0][1]);
  CHECK(ttft_s == Approx(sum_s).epsilon(1e-6));
  const StepCost first = prefill_step(glm_cost_model("tp8-ep8", false), kChunkTokens, 0, false);
  CHECK(chunks[0] == Approx(first.total_s).epsilon(1e-6));
}

TEST_CASE("8xH200 holds the KV of at most 4 1M requests at once and the rest wait", "[simulation][seed]") {
  TestDir dir("sim_seed_1m_capacity");
  const std::string workload = dir.file("w.jsonl");
  constexpr int kRequests = 8;
  testing::write_uniform_workload(workload, kRequests, 0.0, kContext1m - 16, 16);
  const auto r =
      run_tokenline(sim_args(workload, dir.file("o"), "--parallel tp8-ep8 --reservation whole"), dir);
  REQUIRE(r.exit_code == 0);
  int64_t max_running = 0;
  int64_t max_waiting = 0;
  const auto trace = read_json(dir.file("o/trace.json"));
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "C" || e["name"] != "requests") continue;
    max_running = std::max(max_running, e["args"]["running"].get<int64_t>());
    max_waiting = std::max(max_waiting, e["args"]["waiting"].get<int64_t>());
  }
  const KvCapacity cap = kv_capacity(glm_cost_model("tp8-ep8", false), kContext1m);
  CHECK(max_running == cap.max_concurrent_requests);
  CHECK(max_running <= kSeedMaxKvHolders);
  CHECK(max_running >= 1);
  CHECK(max_waiting >= kRequests - kSeedMaxKvHolders);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["requests"]["completed"] == kRequests);
}

// ---- autoscaling and cost (docs/autoscaling.md, docs/cost.md) ------------------------------------------

namespace autoscale {

constexpr double kColdStartS = 8;    // --cold-start-s
constexpr double kDownWindowS = 30;  // --scale-down-stabilization
constexpr int kMaxInstances = 4;

// A burst then a lull: 60 req/s for 60 s (more than one H100 serves for Llama-3.1-8B with these lengths),
// then 2 req/s to 200 s.
void write_burst_workload(const std::string& path) {
  std::ofstream out(path);
  for (int i = 0; i < 3600; ++i)
    out << "{\"arrival_s\": " << i / 60.0 << ", \"input_tokens\": 1024, \"output_tokens\": 256}\n";
  for (int i = 0; i < 280; ++i)
    out << "{\"arrival_s\": " << 60.0 + i / 2.0 << ", \"input_tokens\": 1024, \"output_tokens\": 256}\n";
}

std::string args(const std::string& workload, const std::string& out) {
  return "sim --model llama-3.1-8b --hardware h100 --parallel tp1 --workload '" + workload + "' --out '" +
         out + "' --slo ttft=2s,tpot=100ms --instances 1 --max-instances " + std::to_string(kMaxInstances) +
         " --autoscale concurrency --autoscale-target 16 --autoscale-interval 5 --autoscale-window 10 "
         "--scale-down-stabilization 30 --cold-start-s 8 --gpu-price list";
}

// Complete ("X") spans of trace.json by process id: (name, start us, duration us).
struct Span {
  std::string name;
  double ts, dur;
};
std::map<int, std::vector<Span>> spans_by_pid(const nlohmann::json& trace) {
  std::map<int, std::vector<Span>> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    out[e["pid"].get<int>()].push_back({e["name"], e["ts"], e["dur"]});
  }
  return out;
}

}  // namespace autoscale

TEST_CASE("an autoscaled run starts instances under load, each stepping only after its cold start",
          "[simulation][autoscale]") {
  TestDir dir("sim_autoscale_cold_start");
  const std::string workload = dir.file("w.jsonl");
  autoscale::write_burst_workload(workload);
  REQUIRE(run_tokenline(autoscale::args(workload, dir.file("o")), dir).exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  const auto& a = m["autoscaling"];
  CHECK(a["scale_ups"].get<int>() >= 1);
  CHECK(a["scale_downs"].get<int>() >= 1);
  CHECK(a["cold_starts"].get<int>() >= 1);
  CHECK(a["drains"].get<int>() >= 1);
  CHECK(a["policy"]["cold_start_s"] == autoscale::kColdStartS);
  int cold_starts = 0;
  for (const auto& [pid, spans] : autoscale::spans_by_pid(read_json(dir.file("o/trace.json")))) {
    for (const auto& c : spans) {
      if (c.name != "cold_start") continue;
      ++cold_starts;
      CHECK(c.dur == Approx(autoscale::kColdStartS * 1e6));
      // No step of this instance falls inside its cold start.
      for (const auto& s : spans) {
        if (s.name.rfind("step", 0) != 0) continue;
        CHECK_FALSE((s.ts >= c.ts && s.ts < c.ts + c.dur));
      }
    }
  }
  CHECK(cold_starts == a["cold_starts"].get<int>() - a["cancelled_starts"].get<int>());
  // Every request arrived at an instance that was live: none before the first cold start of its instance
  // ended.
  std::map<int, double> first_arrival;
  for (const auto& row : testing::read_csv_rows(dir.file("o/requests.csv"))) {
    const int instance = std::stoi(row[8]);
    const double arrival = std::stod(row[1]);
    if (!first_arrival.count(instance) || arrival < first_arrival[instance])
      first_arrival[instance] = arrival;
  }
  for (const auto& [instance, t] : first_arrival) {
    INFO("instance " << instance);
    if (instance > 0) CHECK(t >= autoscale::kColdStartS);  // only instance 0 is up at time 0
  }
}

TEST_CASE(
    "across scale events every request completes or is rejected exactly once and drained instances "
    "finish theirs",
    "[simulation][autoscale]") {
  TestDir dir("sim_autoscale_conservation");
  const std::string workload = dir.file("w.jsonl");
  autoscale::write_burst_workload(workload);
  REQUIRE(run_tokenline(autoscale::args(workload, dir.file("o")), dir).exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  const auto& req = m["requests"];
  CHECK(req["arrived"] == 3880);
  CHECK(req["completed"].get<int64_t>() + req["rejected"].get<int64_t>() == 3880);
  CHECK(req["in_flight_at_end"] == 0);
  std::map<int64_t, int> seen;
  for (const auto& row : testing::read_csv_rows(dir.file("o/requests.csv"))) {
    ++seen[std::stoll(row[0])];
    CHECK((row[9] == "completed" || row[9].rfind("rejected", 0) == 0));
  }
  CHECK(seen.size() == 3880);
  for (const auto& [id, n] : seen) CHECK(n == 1);
  // The router sends nothing to a draining instance: no arrival at it between its drain and its next cold
  // start's end.
  const auto rows = testing::read_csv_rows(dir.file("o/requests.csv"));
  // A draining instance steps on until its own requests are done (the span ends with its last step), and
  // steps again only as a new instance after a cold start.
  for (const auto& [pid, spans] : autoscale::spans_by_pid(read_json(dir.file("o/trace.json")))) {
    for (const auto& d : spans) {
      if (d.name != "draining") continue;
      const double end = d.ts + d.dur;
      double back = 1e300;  // the end of the next cold start after the drain
      for (const auto& c : spans) {
        if (c.name == "cold_start" && c.ts >= end) back = std::min(back, c.ts + c.dur);
      }
      for (const auto& row : rows) {
        if (std::stoi(row[8]) != pid - 1) continue;
        const double arrival_us = std::stod(row[1]) * 1e6;
        CHECK_FALSE((arrival_us > d.ts + 1 && arrival_us < back - 1));
      }
      for (const auto& s : spans) {
        if (s.name.rfind("step", 0) != 0 || s.ts < d.ts) continue;
        if (s.ts < end) {
          CHECK(s.ts + s.dur <= end + 1e-3);
          continue;
        }
        bool restarted = false;
        for (const auto& c : spans)
          restarted = restarted || (c.name == "cold_start" && c.ts >= end && c.ts + c.dur <= s.ts + 1e-3);
        CHECK(restarted);
      }
    }
  }
}

TEST_CASE(
    "the instance count stays within min and max and never drops within the stabilisation window of a "
    "scale-up",
    "[simulation][autoscale]") {
  TestDir dir("sim_autoscale_bounds");
  const std::string workload = dir.file("w.jsonl");
  autoscale::write_burst_workload(workload);
  REQUIRE(run_tokenline(autoscale::args(workload, dir.file("o")), dir).exit_code == 0);
  const auto a = read_json(dir.file("o/metrics.json"))["autoscaling"];
  for (const auto& c : a["instances_over_time"]) {
    const int up = c["live"].get<int>() + c["starting"].get<int>() + c["draining"].get<int>();
    CHECK(up <= autoscale::kMaxInstances);
    CHECK(c["live"].get<int>() >= 1);  // --min-instances 1: someone always takes requests
  }
  const auto& d = a["decisions"];
  REQUIRE(d.size() >= 2);
  for (size_t i = 0; i < d.size(); ++i) {
    CHECK(d[i]["to"].get<int>() <= autoscale::kMaxInstances);
    CHECK(d[i]["to"].get<int>() >= 1);
    if (d[i]["to"] > d[i]["from"]) continue;
    for (size_t j = 0; j < i; ++j) {  // each scale-up inside the window holds the count at its level
      if (d[j]["to"] <= d[j]["from"]) continue;
      if (d[i]["t_s"].get<double>() - d[j]["t_s"].get<double>() >= autoscale::kDownWindowS) continue;
      CHECK(d[i]["to"].get<int>() >= d[j]["to"].get<int>());
    }
  }
}

TEST_CASE("an autoscaled run gives byte-identical outputs twice", "[simulation][autoscale]") {
  TestDir dir("sim_autoscale_determinism");
  const std::string workload = dir.file("w.jsonl");
  autoscale::write_burst_workload(workload);
  for (const char* out : {"a", "b"})
    REQUIRE(run_tokenline(autoscale::args(workload, dir.file(out)), dir).exit_code == 0);
  for (const char* file : {"metrics.json", "requests.csv", "trace.json"}) {
    INFO(file);
    CHECK(read_all(dir.file(std::string("a/") + file)) == read_all(dir.file(std::string("b/") + file)));
  }
}

TEST_CASE("a fixed fleet's cost is its GPUs x the simulated time at the price per GPU-hour",
          "[simulation][cost]") {
  TestDir dir("sim_cost");
  const std::string workload = dir.file("w.jsonl");
  testing::write_uniform_workload(workload, 20, 0.0, 1000, 100);
  const std::string common =
      "sim --model llama-3.1-8b --hardware h100 --parallel tp2 --instances 2 --workload '" + workload + "' ";
  REQUIRE(run_tokenline(common + "--out '" + dir.file("o") + "' --gpu-price 2.5", dir).exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  const auto& c = m["cost"];
  const double hours = 4 * m["run"]["simulated_s"].get<double>() / 3600.0;
  CHECK(c["gpu_hours"].get<double>() == Approx(hours));
  CHECK(c["usd_total"].get<double>() == Approx(2.5 * hours));
  CHECK(c["price_source"] == "--gpu-price");
  const double output_tokens =
      m["throughput"]["output_tokens_per_s"].get<double>() * m["throughput"]["span_s"].get<double>();
  CHECK(c["usd_per_million_output_tokens"].get<double>() ==
        Approx(2.5 * hours * 1e6 / output_tokens).epsilon(1e-3));
  CHECK(c["usd_per_million_cached_tokens"].is_null());  // no prefix hit on distinct prompts
  // 'list': the hardware JSON's price, with its source and date.
  REQUIRE(run_tokenline(common + "--out '" + dir.file("l") + "' --gpu-price list", dir).exit_code == 0);
  const auto l = read_json(dir.file("l/metrics.json"))["cost"];
  CHECK(l["usd_per_gpu_hour"] == 2.95);
  CHECK(l["price_source"].get<std::string>().find("2026-05-20") != std::string::npos);
  // Without --gpu-price the list price, as 'list', and no autoscaling block; 'none' writes no cost block.
  REQUIRE(run_tokenline(common + "--out '" + dir.file("d") + "'", dir).exit_code == 0);
  const auto d = read_json(dir.file("d/metrics.json"));
  CHECK(d["cost"] == read_json(dir.file("l/metrics.json"))["cost"]);
  CHECK_FALSE(d.contains("autoscaling"));
  REQUIRE(run_tokenline(common + "--out '" + dir.file("n") + "' --gpu-price none", dir).exit_code == 0);
  const auto n = read_json(dir.file("n/metrics.json"));
  CHECK_FALSE(n.contains("cost"));
  CHECK_FALSE(n.contains("autoscaling"));
  // A hardware without a list price: no cost block by default, and 'list' is refused naming the flag.
  const std::string b300 =
      "sim --model llama-3.1-8b --hardware b300 --parallel tp1 --workload '" + workload + "' ";
  REQUIRE(run_tokenline(b300 + "--out '" + dir.file("b") + "'", dir).exit_code == 0);
  CHECK_FALSE(read_json(dir.file("b/metrics.json")).contains("cost"));
  const auto refused = run_tokenline(b300 + "--out '" + dir.file("bl") + "' --gpu-price list", dir);
  CHECK(refused.exit_code == 2);
  CHECK(refused.stderr_text.find("--gpu-price list") != std::string::npos);
}

TEST_CASE("bad cost and autoscaling flags are refused before the run, naming the flag",
          "[simulation][cost]") {
  TestDir dir("sim_scale_flags");
  const std::string base =
      "sim --model llama-3.1-8b --hardware h100 --parallel tp1 --max-requests 5 --out '" + dir.file("o") +
      "' ";
  const std::pair<const char*, const char*> cases[] = {
      {"--gpu-price cheap", "--gpu-price"},
      {"--gpu-price -1", "--gpu-price"},
      {"--instances 5 --max-instances 4 --autoscale-target 2", "--instances"},
      {"--max-instances 4 --autoscale slo --autoscale-target 0.9", "--autoscale slo"},
      {"--max-instances 4 --autoscale-target 2 --autoscale-window 5", "--autoscale-window"},
      {"--max-instances 4 --autoscale kv --autoscale-target 2", "--autoscale-target"},
      {"--max-instances 4 --autoscale-target 2 --backend simgrid", "--max-instances"},
      {"--min-instances 2", "--max-instances"},
  };
  for (const auto& [flags, named] : cases) {
    INFO(flags);
    const auto r = run_tokenline(base + flags, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find(named) != std::string::npos);
  }
  // A hardware JSON with no list price: 'list' says so.
  const auto r = run_tokenline(
      "sim --model llama-3.1-8b --hardware b300 --parallel tp1 --max-requests 5 --gpu-price list --out '" +
          dir.file("b") + "'",
      dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("lists no price") != std::string::npos);
}

// Issue 43: SGLang's --scheduler-recv-interval (scheduler_recv_skipper.py): while a request decodes, one
// sent to the instance is taken in only when the decode steps since the last receive reach the interval.
//   t=0     request 0 (400 output tokens) prefills, then decodes step after step
//   t=0.3s  request 1 is sent: interval 1 -> planned at the next step; interval 30 -> after up to 30 steps
TEST_CASE("a request sent while others decode waits for SGLang's scheduler to receive it", "[simulation]") {
  TestDir dir("sim_recv_interval");
  const std::string workload = dir.file("w.jsonl");
  {
    std::ofstream w(workload);
    w << "{\"arrival_s\": 0.0, \"input_tokens\": 1000, \"output_tokens\": 400}\n"
         "{\"arrival_s\": 0.3, \"input_tokens\": 1000, \"output_tokens\": 10}\n";
  }
  const auto run = [&](const std::string& name, const std::string& extra) {
    const auto r = run_tokenline(
        sim_args(workload, dir.file(name), "--model llama-3.1-8b --hardware h200 --parallel tp1 " + extra),
        dir);
    REQUIRE(r.exit_code == 0);
    return read_json(dir.file(name + "/metrics.json"));
  };
  const auto every = run("every", "");
  const auto one = run("one", "--scheduler-recv-interval 1");
  const auto thirty = run("thirty", "--scheduler-recv-interval 30");
  // Interval 1 is SGLang's default: the run without the flag (metrics.json differs only in the command line).
  CHECK(every["latency_ms"] == one["latency_ms"]);
  CHECK(every["requests"] == one["requests"]);
  const double ttft_every_ms = every["latency_ms"]["ttft"]["max"].get<double>();
  const double ttft_thirty_ms = thirty["latency_ms"]["ttft"]["max"].get<double>();
  const double tpot_ms = every["latency_ms"]["tpot"]["mean"].get<double>();
  // Request 1 waits for the receive: more than one decode step, at most 30 (plus its own prefill).
  CHECK(ttft_thirty_ms > ttft_every_ms + tpot_ms);
  CHECK(ttft_thirty_ms < ttft_every_ms + 31 * tpot_ms);
  CHECK(thirty["requests"]["completed"] == 2);
  // Bad values and PD runs are refused naming the flag.
  for (const std::string flags : {"--scheduler-recv-interval 0", "--scheduler-recv-interval 30 --pd 1P1D"}) {
    INFO(flags);
    const auto r = run_tokenline(
        sim_args(workload, dir.file("bad"), "--model llama-3.1-8b --hardware h200 --parallel tp1 " + flags),
        dir);
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find("--scheduler-recv-interval") != std::string::npos);
  }
}

}  // namespace
}  // namespace tokenline
