// Issue 18: trace.json at production scale. --trace-window START:END, --trace-requests K, --trace-gzip
// and --trace-detail none as separate `tokenline sim` processes: the trace keeps what they say and
// nothing else, and metrics.json / requests.csv do not depend on them. Also: metrics.json percentiles
// (latency histograms) agree with the exact ones recomputed from requests.csv within the stated error.
#include "cli/trace_options.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "tests/cli/tokenline_process.h"
#include "tests/traces/gunzip.h"
#include "traces/latency_histogram.h"
#include "traces/latency_summary.h"

namespace tokenline {
namespace {

using testing::read_all;
using testing::read_csv_rows;
using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

// ~20 s of arrivals at 8 req/s on tp8-ep8: steps spread over the whole run.
const std::string kSim =
    "sim --workload 'synthetic:n=160,rate=8,input=lognormal:mean=1500,sigma=1,output=uniform:16:128,seed=5' "
    "--parallel tp8-ep8 ";

std::string run_sim(const TestDir& dir, const std::string& out, const std::string& flags) {
  const auto r = run_tokenline(kSim + flags + " --out '" + dir.file(out) + "'", dir);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  return dir.file(out);
}

constexpr double kUsPerS = 1e6;

TEST_CASE("trace options: --trace-window parses START:END and refuses the rest", "[trace_options]") {
  const TraceWindow w = cli::parse_trace_window("3600:3660.5");
  CHECK(w.start_s == 3600);
  CHECK(w.end_s == 3660.5);
  CHECK(std::isinf(cli::parse_trace_window("10:").end_s));
  for (const char* bad : {"", "10", "20:10", "5:5", "-1:4", "a:b", "1:2x", ":5"}) {
    INFO(bad);
    CHECK_THROWS_AS(cli::parse_trace_window(bad), InputError);
  }
  OutputConfig out;
  cli::TraceOptions negative;
  negative.requests = -2;
  CHECK_THROWS_AS(cli::apply_trace_options(negative, out), InputError);
}

TEST_CASE("a bad trace option exits 2 naming it", "[trace_options]") {
  TestDir dir("trace_opt_bad");
  const auto r = run_tokenline(kSim + "--trace-window 9:3 --out '" + dir.file("o") + "'", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("--trace-window") != std::string::npos);
  const auto d = run_tokenline(kSim + "--trace-detail full --out '" + dir.file("o") + "'", dir);
  CHECK(d.exit_code == 2);
  CHECK(d.stderr_text.find("none, step or op") != std::string::npos);
}

TEST_CASE("trace options change trace.json only, and none writes no trace", "[trace_options]") {
  TestDir dir("trace_opt_none");
  const std::string all = run_sim(dir, "all", "");
  const std::string none = run_sim(dir, "none", "--trace-detail none");
  const std::string cut = run_sim(dir, "cut", "--trace-window 5:10 --trace-requests 3");
  CHECK_FALSE(std::filesystem::exists(none + "/trace.json"));
  for (const std::string& other : {none, cut}) {
    CHECK(read_all(other + "/requests.csv") == read_all(all + "/requests.csv"));
    // metrics.json alike but for its configuration block, which records the trace flags given
    nlohmann::json left = nlohmann::json::parse(read_all(other + "/metrics.json"));
    nlohmann::json right = nlohmann::json::parse(read_all(all + "/metrics.json"));
    CHECK(left["configuration"]["arguments"] != right["configuration"]["arguments"]);
    left.erase("configuration");
    right.erase("configuration");
    CHECK(left == right);
  }
}

TEST_CASE("trace options: --trace-window keeps the steps and counters inside it", "[trace_options]") {
  TestDir dir("trace_opt_window");
  const std::string all = run_sim(dir, "all", "");
  const std::string cut = run_sim(dir, "cut", "--trace-window 5:10");
  const auto events = read_json(cut + "/trace.json").at("traceEvents");
  int steps = 0;
  std::set<int64_t> requests;
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    const double ts_s = e.at("ts").get<double>() / kUsPerS;
    if (ph == "X" || ph == "C") {
      CHECK(ts_s >= 5.0 - 1e-9);
      CHECK(ts_s < 10.0 + 1e-6);  // counters sit at a step's end
      steps += ph == "X" ? 1 : 0;
    }
    if (ph == "b" && e.at("name") == "request " + std::to_string(e.at("id").get<int64_t>()))
      requests.insert(e.at("id").get<int64_t>());
  }
  CHECK(steps > 10);
  // The requests traced are exactly those arriving inside the window.
  std::set<int64_t> arriving;
  for (const auto& row : read_csv_rows(all + "/requests.csv")) {
    const double arrival = std::stod(row[1]);
    if (arrival >= 5.0 && arrival < 10.0) arriving.insert(std::stoll(row[0]));
  }
  CHECK(requests == arriving);
  CHECK(read_all(cut + "/trace.json").size() * 2 < read_all(all + "/trace.json").size());
}

TEST_CASE("trace options: --trace-requests K keeps balanced spans of the first K arrivals",
          "[trace_options]") {
  TestDir dir("trace_opt_requests");
  const std::string cut = run_sim(dir, "cut", "--trace-requests 3");
  std::map<int64_t, int> open;  // begin - end per request id
  const nlohmann::json doc = read_json(cut + "/trace.json");
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "b") ++open[e.at("id").get<int64_t>()];
    if (ph == "e") --open[e.at("id").get<int64_t>()];
  }
  REQUIRE(open.size() == 3);
  for (const auto& [id, balance] : open) CHECK(balance == 0);
  CHECK(open.begin()->first == 0);  // synthetic ids are in arrival order
  CHECK(open.rbegin()->first == 2);
}

TEST_CASE(
    "trace options: --trace-gzip writes trace.json.gz with the plain trace's bytes and drops a stale "
    "trace.json",
    "[trace_options]") {
  TestDir dir("trace_opt_gzip");
  const std::string plain = run_sim(dir, "plain", "--trace-window 2:6");
  const std::string out = run_sim(dir, "same", "--trace-window 2:6");
  REQUIRE(std::filesystem::exists(out + "/trace.json"));
  run_sim(dir, "same", "--trace-window 2:6 --trace-gzip");
  CHECK_FALSE(std::filesystem::exists(out + "/trace.json"));
  CHECK(gunzip(out + "/trace.json.gz") == read_all(plain + "/trace.json"));
  const std::string gz = read_all(out + "/trace.json.gz");
  run_sim(dir, "same", "--trace-window 2:6 --trace-gzip");
  CHECK(read_all(out + "/trace.json.gz") == gz);  // byte-identical across reruns
}

// The exact nearest-rank percentile of a sample.
double exact(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(nearest_rank(p, static_cast<int64_t>(values.size())) - 1)];
}

// metrics.json's TTFT, TPOT and E2E percentiles against exact ones from requests.csv. The CSV's times
// have 6 decimals, so the recomputed latencies carry up to 2 us (2e-3 ms) of rounding of their own.
void check_percentiles(const std::string& out) {
  constexpr double kCsvSlackMs = 2e-3;
  std::map<std::string, std::vector<double>> ms;
  for (const auto& row : read_csv_rows(out + "/requests.csv")) {
    if (row[9] != "completed") continue;
    const double arrival = std::stod(row[1]), first = std::stod(row[2]), finish = std::stod(row[3]);
    const double tokens = std::stod(row[5]);
    ms["ttft"].push_back((first - arrival) * 1e3);
    ms["e2e"].push_back((finish - arrival) * 1e3);
    if (tokens > 1) ms["tpot"].push_back((finish - first) * 1e3 / (tokens - 1));
  }
  const auto latency = read_json(out + "/metrics.json").at("latency_ms");
  for (const auto& [name, values] : ms) {
    REQUIRE(values.size() > 20);
    for (const auto& [key, p] : {std::pair{"p50", 50.0}, {"p90", 90.0}, {"p99", 99.0}, {"max", 100.0}}) {
      const double want = exact(values, p), got = latency.at(name).at(key).get<double>();
      INFO(out << " " << name << " " << key << ": exact " << want << ", histogram " << got);
      CHECK(std::abs(got - want) <= LatencyHistogram::kRelativeError * want + kCsvSlackMs);
    }
    CHECK(latency.at(name).at("count").get<size_t>() == values.size());
  }
  CHECK(latency.at("itl").at("count").get<int64_t>() > 0);
  CHECK(latency.at("queueing").at("count").get<int64_t>() > 0);
}

TEST_CASE("metrics.json percentiles agree with exact ones within the histogram's error", "[trace_options]") {
  TestDir dir("trace_opt_percentiles");
  check_percentiles(run_sim(dir, "synthetic", "--trace-detail none"));
  const auto r = run_tokenline(
      "sim --workload '" + testing::source_file("tests/cli/fixtures/mooncake_conversation_3001_3300.jsonl") +
          "' --trace-detail none --out '" + dir.file("mooncake") + "'",
      dir);
  REQUIRE(r.exit_code == 0);
  check_percentiles(dir.file("mooncake"));
}

}  // namespace
}  // namespace tokenline
