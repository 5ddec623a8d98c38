// `tokenline sim --backend simgrid` end to end: the same three outputs as the analytic backend (with the
// same batches, the same times within 1%) plus link counters (in trace.json and links.json); bad simgrid
// options exit with code 2.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/simgrid/simgrid_platform.h"
#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

std::string sim_args(const std::string& workload, const std::string& out, const std::string& extra) {
  return "sim --workload '" + workload + "' --out '" + out + "' " + extra;
}

TEST_CASE("tokenline sim --backend simgrid writes the analytic outputs with the same times and links.json") {
  TestDir dir("simgrid_cli");
  const std::string workload = dir.file("w.jsonl");
  // 64 requests at once on a two-node dp16-ep16 instance: every MoE layer's all-to-all crosses the IB.
  testing::write_uniform_workload(workload, 64, 0.0, 3000, 40);
  const std::string layout = "--cluster h200x16-ib --parallel dp16-ep16 ";
  const auto a = run_tokenline(sim_args(workload, dir.file("a"), layout + "--backend analytic"), dir);
  const auto s = run_tokenline(sim_args(workload, dir.file("s"), layout + "--backend simgrid"), dir);
  INFO(a.stderr_text << s.stderr_text);
  REQUIRE(a.exit_code == 0);
  REQUIRE(s.exit_code == 0);
  for (const char* f : {"metrics.json", "requests.csv", "trace.json"}) {
    CHECK(std::filesystem::exists(dir.file("s") + "/" + f));
  }
  const auto ma = read_json(dir.file("a/metrics.json"));
  const auto ms = read_json(dir.file("s/metrics.json"));
  CHECK(ms["run"]["backend"] == "simgrid");
  CHECK(ms["requests"]["completed"] == ma["requests"]["completed"]);
  const double sa = ma["run"]["simulated_s"];
  const double ss = ms["run"]["simulated_s"];
  CHECK(std::abs(ss - sa) <= 0.01 * sa);
  const double ta = ma["latency_ms"]["ttft"]["p50"];
  const double ts = ms["latency_ms"]["ttft"]["p50"];
  CHECK(std::abs(ts - ta) <= 0.01 * ta);
  // links.json: counters for the IB links the all-to-all crossed, some of them busy.
  const auto links = read_json(dir.file("s/links.json"));
  bool ib_busy = false;
  for (const auto& e : links["traceEvents"]) {
    if (e["ph"] != "C") continue;
    const std::string name = e["name"];
    if (name.find("nic") != std::string::npos && e["args"]["utilisation_permille"].get<int64_t>() > 0) {
      ib_busy = true;
    }
  }
  CHECK(ib_busy);
  CHECK_FALSE(std::filesystem::exists(dir.file("a/links.json")));
  // The same counters are in trace.json, as one more process beside the instances.
  const auto trace = read_json(dir.file("s/trace.json"));
  bool links_process = false;
  int64_t link_counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["args"].contains("name") &&
        e["args"]["name"].get<std::string>().rfind("links (", 0) == 0)
      links_process = true;
    if (e["ph"] == "C" && e["args"].contains("utilisation_permille")) ++link_counters;
  }
  CHECK(links_process);
  CHECK(link_counters > 0);
}

TEST_CASE("tokenline sim --backend simgrid gives byte-identical outputs twice with op detail and overlap") {
  TestDir dir("simgrid_cli_det");
  const std::string workload = testing::source_file("workloads/data/mooncake_conversation_head.jsonl");
  const std::string extra =
      "--cluster h200x16-ib --parallel dp16-ep16 --backend simgrid --overlap tbo "
      "--trace-detail op --max-requests 40";
  REQUIRE(run_tokenline(sim_args(workload, dir.file("one"), extra), dir).exit_code == 0);
  REQUIRE(run_tokenline(sim_args(workload, dir.file("two"), extra), dir).exit_code == 0);
  for (const char* f : {"metrics.json", "requests.csv", "trace.json", "links.json"}) {
    INFO(f);
    const std::string one = testing::read_all(dir.file("one") + "/" + f);
    CHECK(!one.empty());
    CHECK(one == testing::read_all(dir.file("two") + "/" + f));
  }
}

TEST_CASE("bad simgrid options exit with code 2") {
  TestDir dir("simgrid_cli_bad");
  const std::string workload = dir.file("w.jsonl");
  testing::write_uniform_workload(workload, 2, 0.0, 100, 4);
  CHECK(run_tokenline(sim_args(workload, dir.file("o1"), "--backend simgrid --overlap sideways"), dir)
            .exit_code == 2);
  CHECK(
      run_tokenline(sim_args(workload, dir.file("o2"), "--backend analytic --overlap tbo"), dir).exit_code ==
      2);
  // PD on the one-node preset: dp8-ep8 twice needs 16 GPUs.
  CHECK(run_tokenline(sim_args(workload, dir.file("o3"), "--backend simgrid --pd 1P1D"), dir).exit_code == 2);
  // dp8-ep8 twice needs 16 GPUs; the one-node preset has 8.
  CHECK(run_tokenline(sim_args(workload, dir.file("o4"), "--backend simgrid --cluster h200x8 --instances 2"),
                      dir)
            .exit_code == 2);
}

}  // namespace
TEST_CASE("tokenline sim --pd 1P1D --backend simgrid moves each KV over the IB at the route's rate") {
  TestDir dir("simgrid_pd");
  const std::string workload = dir.file("w.jsonl");
  // A few requests far apart: each hand-off is alone on the network (dp8-ep8's all-to-all stays on node).
  constexpr int kRequests = 4;
  constexpr double kGapS = 1.0;  // >> one 2,000-token prefill, its ~ms transfer and 8 decode steps
  {
    std::ofstream out(workload);
    for (int i = 0; i < kRequests; ++i)
      out << "{\"arrival_s\": " << i * kGapS << ", \"input_tokens\": 2000, \"output_tokens\": 8}\n";
  }
  // The network alone: the profile's per-token hand-off time (pd_handoff_per_token_s, tested in
  // tests/sim/driver/pd_simulation_test.cpp) is set to 0.
  const std::string extra =
      "--cluster h200x16-ib --parallel dp8-ep8 --pd 1P1D --backend simgrid --profile h200-sglang "
      "--profile-set pd_handoff_per_token_s=0";
  const auto one = run_tokenline(sim_args(workload, dir.file("one"), extra), dir);
  INFO(one.stderr_text);
  REQUIRE(one.exit_code == 0);
  REQUIRE(run_tokenline(sim_args(workload, dir.file("two"), extra), dir).exit_code == 0);
  for (const char* f : {"metrics.json", "requests.csv", "trace.json", "links.json"}) {
    INFO(f);
    const std::string text = testing::read_all(dir.file("one") + "/" + f);
    CHECK(!text.empty());
    CHECK(text == testing::read_all(dir.file("two") + "/" + f));
  }
  const auto m = read_json(dir.file("one/metrics.json"));
  CHECK(m["run"]["backend"] == "simgrid");
  CHECK(m["requests"]["completed"].get<int64_t>() == kRequests);
  // Prefill on node 0 (GPUs 0-7), decode on node 1 (GPUs 8-15): every route between them has one
  // bottleneck rate, and the hop's latency is small beside a ~100 MB shard.
  const sg::PlatformSpec platform = sg::load_platform("h200x16-ib", 1.0);
  double slowest = 0, fastest = 0;
  for (int src = 0; src < 8; ++src) {
    for (int dst = 8; dst < 16; ++dst) {
      double bottleneck = 0;
      for (const sg::PlatformHop& h : platform.routes[static_cast<size_t>(src)][static_cast<size_t>(dst)]) {
        const double bw = platform.links[static_cast<size_t>(h.link)].bw_per_direction;
        bottleneck = bottleneck == 0 ? bw : std::min(bottleneck, bw);
      }
      slowest = slowest == 0 ? bottleneck : std::min(slowest, bottleneck);
      fastest = std::max(fastest, bottleneck);
    }
  }
  REQUIRE(slowest > 0);
  REQUIRE(fastest == slowest);
  constexpr size_t kColDecodeInstance = 10;
  constexpr size_t kColTransferBytes = 11;
  constexpr size_t kColTransferS = 12;
  const auto rows = testing::read_csv_rows(dir.file("one/requests.csv"));
  REQUIRE(rows.size() == static_cast<size_t>(kRequests));
  for (const auto& row : rows) {
    REQUIRE(row.size() > kColTransferS);
    CHECK(row[kColDecodeInstance] == "1");
    const double bytes = std::stod(row[kColTransferBytes]);
    const double seconds = std::stod(row[kColTransferS]);
    CHECK(bytes > 0);
    CHECK(seconds == Approx(bytes / slowest).epsilon(0.03));
  }
  // The KV crossed the IB: links.json shows NIC counters.
  const auto links = read_json(dir.file("one/links.json"));
  bool nic_busy = false;
  for (const auto& e : links["traceEvents"]) {
    if (e["ph"] == "C" && e["name"].get<std::string>().find("nic") != std::string::npos &&
        e["args"]["utilisation_permille"].get<int64_t>() > 0)
      nic_busy = true;
  }
  CHECK(nic_busy);
}

}  // namespace tokenline
