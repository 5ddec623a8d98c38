// Determinism and conservation across scale events (issue 46): whole `tokenline sim` runs, co-located with a
// host KV tier and as PD pools each scaled by its own metric, as separate processes. Each run scales up
// under a burst and drains instances in the lull that follows while they still hold running requests and
// cached prefixes; the drain log (metrics.json autoscaling.drain_log) says what each held, and a drained
// instance that kept a page someone needs fails its run (sim/driver/simulation.cpp retire()).
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_all;
using testing::read_csv_rows;
using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

constexpr size_t kColId = 0;
constexpr size_t kColStatus = 9;
constexpr int kBurst = 3600;  // 60 s at 60 req/s
constexpr int kLull = 1120;   // 140 s at 8 req/s

// A burst then a lull; every prompt opens with the same two 512-token blocks (a shared system prompt the
// radix cache keeps, so a draining instance holds cached pages) before blocks of its own.
void write_workload(const std::string& path) {
  std::ofstream out(path);
  auto line = [&](double t, int id) {
    out << "{\"arrival_s\": " << t
        << ", \"input_tokens\": 2048, \"output_tokens\": 384, \"block_tokens\": 512, "
        << "\"hash_ids\": [1, 2, " << 1000 + 2 * id << ", " << 1001 + 2 * id << "]}\n";
  };
  for (int i = 0; i < kBurst; ++i) line(i / 60.0, i);
  for (int i = 0; i < kLull; ++i) line(60.0 + i / 8.0, kBurst + i);
}

std::string colocated(const std::string& workload, const std::string& out) {
  return "sim --model llama-3.1-8b --hardware h100 --parallel tp1 --roofline --workload '" + workload +
         "' --out '" + out +
         "' --kv-host --instances 1 --max-instances 4 --autoscale concurrency --autoscale-target 16 "
         "--autoscale-interval 5 --autoscale-window 10 --scale-down-stabilization 30 --cold-start-s 8 "
         "--slo ttft=2s,tpot=100ms";
}

std::string pd(const std::string& workload, const std::string& out) {
  return "sim --model llama-3.1-8b --hardware h100 --parallel tp1 --roofline --workload '" + workload +
         "' --out '" + out +
         "' --pd 1P1D --pd-max 3P3D --autoscale-prefill-target 2 --autoscale-decode-target 0.2 "
         "--autoscale-interval 5 --autoscale-window 10 --scale-down-stabilization 30 --cold-start-s 8 "
         "--slo ttft=2s,tpot=100ms";
}

// Every request left exactly once, as completed or rejected; none is left in flight.
void check_conserved(const std::string& dir) {
  const auto m = read_json(dir + "/metrics.json");
  const auto& r = m["requests"];
  CHECK(r["arrived"] == kBurst + kLull);
  CHECK(r["completed"].get<int64_t>() + r["rejected"].get<int64_t>() == kBurst + kLull);
  CHECK(r["in_flight_at_end"] == 0);
  std::map<int64_t, int> seen;
  for (const auto& row : read_csv_rows(dir + "/requests.csv")) {
    ++seen[std::stoll(row[kColId])];
    CHECK((row[kColStatus] == "completed" || row[kColStatus].rfind("rejected", 0) == 0));
  }
  CHECK(seen.size() == static_cast<size_t>(kBurst + kLull));
  for (const auto& [id, n] : seen) CHECK(n == 1);
}

// Each drain ended with no KV page anyone needs; returns the drains that began holding running requests and
// cached pages.
int check_drains(const nlohmann::json& block) {
  int loaded = 0;
  for (const auto& d : block["drain_log"]) {
    INFO(d.dump());
    CHECK_FALSE(d["end_s"].is_null());
    CHECK(d["used_pages_at_end"] == 0);
    if (d["requests_at_start"].get<int64_t>() > 0 && d["cached_pages_at_start"].get<int64_t>() > 0) ++loaded;
  }
  return loaded;
}

void check_identical(const std::string& a, const std::string& b) {
  for (const char* file : {"metrics.json", "requests.csv", "trace.json"}) {
    INFO(file);
    CHECK(read_all(a + "/" + file) == read_all(b + "/" + file));
  }
}

TEST_CASE("with a host tier, scale events conserve requests and pages and repeat byte for byte",
          "[simulation][autoscale][property]") {
  TestDir dir("autoscale_property_colocated");
  const std::string workload = dir.file("w.jsonl");
  write_workload(workload);
  for (const char* out : {"a", "b"}) {
    const auto r = run_tokenline(colocated(workload, dir.file(out)), dir);
    INFO(r.stderr_text);
    REQUIRE(r.exit_code == 0);
  }
  check_identical(dir.file("a"), dir.file("b"));
  check_conserved(dir.file("a"));
  const auto m = read_json(dir.file("a/metrics.json"));
  const auto& a = m["autoscaling"];
  CHECK(a["scale_ups"].get<int>() >= 1);
  CHECK(a["drains"].get<int>() >= 1);
  CHECK(a["drain_log"].size() == a["drains"].get<size_t>());
  CHECK(check_drains(a) >= 1);  // a drain began with requests running and prefixes cached
  CHECK(m["prefix_cache"]["hit_rate"].get<double>() > 0);
  CHECK(m.contains("kv_tiers"));
}

TEST_CASE("PD pools scale each by its own metric and conserve requests and pages across scale events",
          "[simulation][autoscale][property][pd]") {
  TestDir dir("autoscale_property_pd");
  const std::string workload = dir.file("w.jsonl");
  write_workload(workload);
  for (const char* out : {"a", "b"}) {
    const auto r = run_tokenline(pd(workload, dir.file(out)), dir);
    INFO(r.stderr_text);
    REQUIRE(r.exit_code == 0);
  }
  check_identical(dir.file("a"), dir.file("b"));
  check_conserved(dir.file("a"));
  const auto a = read_json(dir.file("a/metrics.json"))["autoscaling"];
  for (const char* pool : {"prefill", "decode"}) {
    INFO(pool);
    const auto& p = a[pool];
    CHECK(p["scale_ups"].get<int>() >= 1);
    CHECK(p["scale_downs"].get<int>() >= 1);
    CHECK(p["policy"]["metric"] == (std::string(pool) == "prefill" ? "queue" : "kv"));
    CHECK(p["policy"]["max_instances"] == 3);
    for (const auto& c : p["instances_over_time"]) {
      CHECK(c["live"].get<int>() + c["starting"].get<int>() + c["draining"].get<int>() <= 3);
      CHECK(c["live"].get<int>() >= 1);  // --pd-min 1P1D: each pool always has an instance taking work
    }
    check_drains(p);
  }
  CHECK(a["gpu_hours"].get<double>() ==
        Approx(a["prefill"]["gpu_hours"].get<double>() + a["decode"]["gpu_hours"].get<double>()));
  CHECK(a["scale_ups"] == a["prefill"]["scale_ups"].get<int>() + a["decode"]["scale_ups"].get<int>());
  // The decode pool's requests finish there: its SLO windows count every completed request.
  int64_t finished = 0;
  for (const auto& w : a["decode"]["slo_windows"]) finished += w["finished"].get<int64_t>();
  CHECK(finished == read_json(dir.file("a/metrics.json"))["requests"]["completed"].get<int64_t>());
}

TEST_CASE("PD autoscaling flags are refused with the flag named", "[simulation][autoscale][pd]") {
  TestDir dir("autoscale_property_pd_flags");
  const std::string base =
      "sim --model llama-3.1-8b --hardware h100 --parallel tp1 --max-requests 5 --out '" + dir.file("o") +
      "' ";
  const std::pair<const char*, const char*> cases[] = {
      {"--pd-max 2P2D --autoscale-prefill-target 2 --autoscale-decode-target 0.5", "--pd-max"},
      {"--pd 1P1D --pd-max 2P2D --autoscale-decode-target 0.5", "--autoscale-prefill-target"},
      {"--pd 1P1D --pd-max 2P2D --autoscale-prefill-target 2 --autoscale-decode-target 2",
       "--autoscale-decode-target"},
      {"--pd 2P1D --pd-max 1P2D --autoscale-prefill-target 2 --autoscale-decode-target 0.5", "--pd-max"},
      {"--pd 1P1D --pd-max 2P2D --autoscale kv --autoscale-prefill-target 2 --autoscale-decode-target 0.5",
       "--autoscale"},
      {"--pd 1P1D --max-instances 4 --autoscale-target 2", "--max-instances"},
      {"--pd 1P1D --autoscale-prefill-target 2", "--pd-max"},
  };
  for (const auto& [flags, named] : cases) {
    INFO(flags);
    const auto r = run_tokenline(base + flags, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find(named) != std::string::npos);
  }
}

}  // namespace
}  // namespace tokenline
