// `tokenline sim --pd 1P1D --backend simgrid` hand-offs as network traffic, run as separate processes: a KV
// transfer into a NIC that also carries the decode instance's all-to-all takes longer than alone, by the
// bytes the all-to-all put on that NIC while it ran; and --pd-transfer layer streams each layer's share so
// that only about one layer's transfer follows the prefill, as the analytic backend's layer mode predicts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cost/pd_link.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "sim/simgrid/simgrid_platform.h"
#include "tests/cli/tokenline_process.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

using testing::read_csv_rows;
using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

// requests.csv columns
constexpr size_t kColId = 0;
constexpr size_t kColFirstToken = 2;
constexpr size_t kColFinish = 3;
constexpr size_t kColTransferBytes = 11;
constexpr size_t kColTransferS = 12;
constexpr double kUsPerS = 1e6;       // trace.json timestamps are microseconds
constexpr double kPerMille = 1000.0;  // links.json utilisation unit

std::string sim_args(const std::string& workload, const std::string& out, const std::string& extra) {
  // The seed's model (tokenline sim's default time source would be the shipped h200-sglang profile).
  return "sim --roofline --workload '" + workload + "' --out '" + out + "' " + extra;
}

// The slowest and fastest bottleneck rate, and the largest latency, over the routes from GPUs [src_lo,
// src_hi) to GPUs [dst_lo, dst_hi).
struct RouteRates {
  double slowest = 0;
  double fastest = 0;
  double latency_s = 0;
};
RouteRates route_rates(const sg::PlatformSpec& p, int src_lo, int src_hi, int dst_lo, int dst_hi) {
  RouteRates r;
  for (int src = src_lo; src < src_hi; ++src) {
    for (int dst = dst_lo; dst < dst_hi; ++dst) {
      double bottleneck = 0, latency = 0;
      for (const sg::PlatformHop& h : p.routes[static_cast<size_t>(src)][static_cast<size_t>(dst)]) {
        const sg::PlatformLink& link = p.links[static_cast<size_t>(h.link)];
        bottleneck = bottleneck == 0 ? link.bw_per_direction : std::min(bottleneck, link.bw_per_direction);
        latency += link.latency_s;
      }
      r.slowest = r.slowest == 0 ? bottleneck : std::min(r.slowest, bottleneck);
      r.fastest = std::max(r.fastest, bottleneck);
      r.latency_s = std::max(r.latency_s, latency);
    }
  }
  return r;
}

// [start, end] of request `id`'s kv_transfer span in trace.json, in seconds.
std::pair<double, double> kv_transfer_span(const nlohmann::json& trace, int64_t id) {
  std::pair<double, double> span{-1, -1};
  for (const auto& e : trace["traceEvents"]) {
    if (e["name"] != "kv_transfer" || e["id"].get<int64_t>() != id) continue;
    (e["ph"] == "b" ? span.first : span.second) = e["ts"].get<double>() / kUsPerS;
  }
  return span;
}

// The step spans [start, end] (s) of the instance whose trace process name starts with `prefix`, once
// per step (its rank threads share them).
std::vector<std::pair<double, double>> step_spans(const nlohmann::json& trace, const std::string& prefix) {
  int64_t pid = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" &&
        e["args"]["name"].get<std::string>().rfind(prefix, 0) == 0)
      pid = e["pid"].get<int64_t>();
  }
  std::map<double, double> steps;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "step" && e["pid"].get<int64_t>() == pid)
      steps[e["ts"].get<double>() / kUsPerS] = e["dur"].get<double>() / kUsPerS;
  }
  std::vector<std::pair<double, double>> out;
  for (const auto& [start, dur] : steps) out.emplace_back(start, start + dur);
  return out;
}

// links.json: utilisation (permille) per link direction name, per whole-second window.
std::map<std::string, std::map<int64_t, int64_t>> link_windows(const nlohmann::json& links) {
  std::map<std::string, std::map<int64_t, int64_t>> out;
  for (const auto& e : links["traceEvents"]) {
    if (e["ph"] != "C") continue;
    const auto window = static_cast<int64_t>(e["ts"].get<double>() / kUsPerS);
    out[e["name"].get<std::string>()][window] = e["args"]["utilisation_permille"].get<int64_t>();
  }
  return out;
}

const std::vector<std::string>& row_of(const std::vector<std::vector<std::string>>& rows, int64_t id) {
  for (const auto& row : rows) {
    if (std::stoll(row[kColId]) == id) return row;
  }
  FAIL("request " << id << " not in requests.csv");
  return rows.front();
}

// h200x16-ib with a third node: the tp8 prefill instance fills node 0 and the dp16-ep16 decode instance
// nodes 1 and 2, so every hand-off crosses the IB into a decode GPU's NIC, and the decode instance's
// all-to-all crosses the same NICs between nodes 1 and 2 (GLM-5.3 needs 8 GPUs per prefill instance, so
// the two-node preset cannot hold a decode instance that spans nodes beside a prefill instance that
// sends over IB to every one of its ranks).
std::string three_node_cluster(const TestDir& dir) {
  auto cluster = read_json(testing::source_file("topologies/clusters/h200x16-ib.json"));
  cluster["name"] = "h200x24-ib";
  cluster["description"] = "h200x16-ib with a third node";
  cluster["nodes"] = 3;
  const std::string path = dir.file("h200x24-ib.json");
  std::ofstream(path) << cluster.dump(1);
  return path;
}

}  // namespace

TEST_CASE("A KV hand-off into a NIC shared with the decode all-to-all is slower by the all-to-all's bytes") {
  TestDir dir("pd_simgrid_shared_nic");
  const std::string cluster = three_node_cluster(dir);
  constexpr int kDecodeRanks = 16;               // dp16-ep16
  constexpr int kBackground = 8 * kDecodeRanks;  // eight decoding requests per rank: a2a on every NIC
  constexpr int64_t kBackgroundOutput = 2000;    // ~20 ms steps: decoding until well after the hand-off
  constexpr int64_t kProbePrompt = 200000;       // ~10.8 GB of KV: a dozen decode steps alone on a NIC
  constexpr double kProbeArrivalS = 8;           // the background decodes steadily from ~1 s
  constexpr int64_t kSteadyFirstS = 2;           // steady windows [2 s, 8 s): background decode only
  constexpr int64_t kSteadyEndS = static_cast<int64_t>(kProbeArrivalS);
  const std::string probe =
      "{\"arrival_s\": %A, \"input_tokens\": " + std::to_string(kProbePrompt) + ", \"output_tokens\": 4}\n";
  const auto probe_at = [&](double t) {
    std::string line = probe;
    return line.replace(line.find("%A"), 2, std::to_string(t));
  };
  const std::string idle = dir.file("idle.jsonl"), busy = dir.file("busy.jsonl");
  std::ofstream(idle) << probe_at(0);
  {
    std::ofstream out(busy);
    for (int i = 0; i < kBackground; ++i)
      out << "{\"arrival_s\": 0, \"input_tokens\": 500, \"output_tokens\": " << kBackgroundOutput << "}\n";
    out << probe_at(kProbeArrivalS);
  }
  const std::string layout =
      "--parallel tp8,dp16-ep16 --pd 1P1D --backend simgrid --cluster '" + cluster + "'";
  for (const auto& [workload, out] : {std::pair{idle, "idle"}, std::pair{busy, "busy"}}) {
    const auto r = run_tokenline(sim_args(workload, dir.file(out), layout), dir);
    INFO(r.stderr_text);
    REQUIRE(r.exit_code == 0);
  }
  // The same busy workload with the decode instance inside node 1 of the two-node preset: its all-to-all
  // stays on NVLink, the hand-off still crosses the IB into one decode GPU's NIC.
  const auto local =
      run_tokenline(sim_args(busy, dir.file("local"),
                             "--parallel tp8,dp8-ep8 --pd 1P1D --backend simgrid --cluster h200x16-ib"),
                    dir);
  REQUIRE(local.exit_code == 0);

  // Every route from the prefill node into a decode GPU has the same bottleneck: that GPU's NIC.
  const sg::PlatformSpec platform = sg::load_platform(cluster, 1.0);
  const RouteRates nic = route_rates(platform, 0, 8, 8, 24);
  REQUIRE(nic.slowest > 0);
  REQUIRE(nic.fastest == nic.slowest);
  const double nic_bps = nic.slowest;

  const auto idle_row = read_csv_rows(dir.file("idle/requests.csv")).at(0);
  const double kv_bytes = std::stod(idle_row[kColTransferBytes]);
  const double idle_s = std::stod(idle_row[kColTransferS]);
  CHECK(idle_s == Approx(kv_bytes / nic_bps).epsilon(0.01));
  const auto local_row = row_of(read_csv_rows(dir.file("local/requests.csv")), kBackground);
  CHECK(std::stod(local_row[kColTransferBytes]) == kv_bytes);
  CHECK(std::stod(local_row[kColTransferS]) == Approx(kv_bytes / nic_bps).epsilon(0.01));
  const auto busy_row = row_of(read_csv_rows(dir.file("busy/requests.csv")), kBackground);
  CHECK(std::stod(busy_row[kColTransferBytes]) == kv_bytes);

  const auto trace = read_json(dir.file("busy/trace.json"));
  const auto [start_s, end_s] = kv_transfer_span(trace, kBackground);
  REQUIRE(start_s > kProbeArrivalS);
  REQUIRE(end_s > start_s);
  const double busy_s = end_s - start_s;
  CHECK(busy_s == Approx(std::stod(busy_row[kColTransferS])).margin(1e-6));
  // The NIC the KV went into: the busiest NIC in the transfer's window; the decode all-to-all's bytes on
  // it per step, from its steady windows before the probe arrived and the decode steps that started there.
  const auto windows = link_windows(read_json(dir.file("busy/links.json")));
  const auto transfer_window = static_cast<int64_t>(start_s);
  std::string nic_name;
  int64_t busiest = -1;
  for (const auto& [name, w] : windows) {
    if (name.find("/nic") == std::string::npos || name.find(" down") == std::string::npos) continue;
    if (w.count(transfer_window) != 0 && w.at(transfer_window) > busiest) {
      busiest = w.at(transfer_window);
      nic_name = name;
    }
  }
  REQUIRE(!nic_name.empty());
  const auto decode_steps = step_spans(trace, "instance 1 ");
  double steady_bytes = 0;
  int64_t steady_steps = 0;
  double steady_longest_s = 0;
  for (int64_t w = kSteadyFirstS; w < kSteadyEndS; ++w) {
    const int64_t permille = windows.at(nic_name).at(w);
    CHECK(permille > 0);  // the all-to-all crosses this NIC in every step
    CHECK(permille < busiest);
    steady_bytes += double(permille) / kPerMille * nic_bps;  // one-second windows
  }
  for (const auto& [s, e] : decode_steps) {
    if (s < double(kSteadyFirstS) || s >= double(kSteadyEndS)) continue;
    ++steady_steps;
    steady_longest_s = std::max(steady_longest_s, e - s);
  }
  REQUIRE(steady_steps > 100);
  const double a2a_bytes_per_step = steady_bytes / double(steady_steps);
  // While the KV flows the NIC is full (it is their bottleneck), so the transfer lasts (KV + the
  // all-to-all bytes that shared the NIC) / rate: between the steps inside the transfer and those that
  // overlap it. 1% for the permille rounding and the steady windows' edge steps.
  int64_t inside = 0, overlapping = 0;
  double inside_mean_s = 0;
  for (const auto& [s, e] : decode_steps) {
    if (s < end_s && e > start_s) ++overlapping;
    if (s >= start_s && e <= end_s) {
      ++inside;
      inside_mean_s += e - s;
    }
  }
  REQUIRE(inside >= 3);
  inside_mean_s /= double(inside);
  INFO("alone " << idle_s << " s, shared " << busy_s << " s, " << inside << "-" << overlapping
                << " decode steps of " << a2a_bytes_per_step / 1e6 << " MB on " << nic_name);
  CHECK(busy_s > idle_s + a2a_bytes_per_step / nic_bps);
  CHECK(busy_s >= 0.99 * (kv_bytes + double(inside) * a2a_bytes_per_step) / nic_bps);
  CHECK(busy_s <= 1.01 * (kv_bytes + double(overlapping) * a2a_bytes_per_step) / nic_bps);
  // ... and the decode steps that share the NIC with the KV are slower than any steady one.
  CHECK(inside_mean_s > steady_longest_s);
}

TEST_CASE("Layer-streamed KV on simgrid exposes one layer's transfer, as the analytic layer mode does") {
  TestDir dir("pd_simgrid_layer");
  const std::string workload = dir.file("w.jsonl");
  constexpr int kRequests = 4;
  constexpr double kGapS = 3.0;       // >> one 30K-token prefill (~1.5 s) and its hand-off: each alone
  constexpr int64_t kPrompt = 30000;  // one prefill chunk (32,768 tokens), so both modes stream alike
  {
    std::ofstream out(workload);
    for (int i = 0; i < kRequests; ++i)
      out << "{\"arrival_s\": " << i * kGapS << ", \"input_tokens\": " << kPrompt
          << ", \"output_tokens\": 8}\n";
  }
  const ModelConfig model = model_preset("glm-5.3");
  const CostModel cm =
      make_cost_model(model, parse_parallel("tp8", "test"), model.default_kv_layout, load_hardware("h200"));
  const double layers = model.layers;
  const sg::PlatformSpec platform = sg::load_platform("h200x16-ib", 1.0);
  std::map<std::string, std::vector<std::vector<std::string>>> rows;
  std::map<std::string, nlohmann::json> traces;  // kv_transfer spans to the ns (requests.csv has us)
  for (const char* decode : {"tp8", "dp8-ep8"}) {
    for (const char* backend : {"analytic", "simgrid"}) {
      for (const char* mode : {"whole", "layer"}) {
        const std::string name = std::string(decode) + "_" + backend + "_" + mode;
        const auto r =
            run_tokenline(sim_args(workload, dir.file(name),
                                   std::string("--cluster h200x16-ib --pd 1P1D --parallel tp8,") + decode +
                                       " --backend " + backend + " --pd-transfer " + mode),
                          dir);
        INFO(name << ": " << r.stderr_text);
        REQUIRE(r.exit_code == 0);
        rows[name] = read_csv_rows(dir.file(name + "/requests.csv"));
        traces[name] = read_json(dir.file(name + "/trace.json"));
        REQUIRE(rows[name].size() == static_cast<size_t>(kRequests));
      }
    }
  }
  // tp8 -> tp8: GPU k sends its shard to GPU 8 + k over its own rail, so the eight routes together carry
  // what the analytic ib400 link of eight GPUs does.
  const RouteRates rail = route_rates(platform, 0, 1, 8, 9);
  const double bytes = std::stod(rows["tp8_simgrid_layer"][0][kColTransferBytes]);
  const PdLinkRate ib400 = pd_link_rate(PdLink::kIb400, cm, cm.parallel.tp);
  REQUIRE(8 * rail.slowest == Approx(ib400.bytes_per_s).epsilon(1e-9));
  for (int i = 0; i < kRequests; ++i) {
    INFO("request " << i);
    const auto& sg_layer = rows["tp8_simgrid_layer"][static_cast<size_t>(i)];
    const auto& an_layer = rows["tp8_analytic_layer"][static_cast<size_t>(i)];
    const auto& sg_whole = rows["tp8_simgrid_whole"][static_cast<size_t>(i)];
    const auto sg_span = kv_transfer_span(traces["tp8_simgrid_layer"], i);
    const auto an_span = kv_transfer_span(traces["tp8_analytic_layer"], i);
    const double sg_s = sg_span.second - sg_span.first;
    const double an_s = an_span.second - an_span.first;
    CHECK(sg_s == Approx(std::stod(sg_layer[kColTransferS])).margin(1e-6));
    // One layer's share over the eight rails plus one route's latency (the last layer's flow) ...
    CHECK(sg_s == Approx(bytes / layers / (8 * rail.slowest) + rail.latency_s).epsilon(0.01));
    // ... within 5% of the analytic layer mode, whose latency is the hardware's (not the route's four
    // hops): without the latencies, the same wire time ...
    CHECK(an_s == Approx(ib400.time_s(bytes / layers)).epsilon(1e-3));
    CHECK(sg_s == Approx(an_s).epsilon(0.05));
    CHECK(sg_s - rail.latency_s == Approx(an_s - ib400.latency_s).epsilon(1e-3));  // the same wire time
    // ... and about a layer's worth of the whole transfer, with the same first token and finish.
    CHECK(sg_s < 2 * std::stod(sg_whole[kColTransferS]) / layers);
    CHECK(std::stod(sg_layer[kColFirstToken]) == Approx(std::stod(an_layer[kColFirstToken])).epsilon(1e-4));
    CHECK(std::stod(sg_layer[kColFinish]) == Approx(std::stod(an_layer[kColFinish])).epsilon(1e-4));
    CHECK(std::stod(sg_layer[kColFinish]) < std::stod(sg_whole[kColFinish]));
  }
  // tp8 -> dp8-ep8: the eight shards go to one decode GPU, so each layer's share crosses its NIC alone.
  const RouteRates into_one = route_rates(platform, 0, 8, 8, 9);
  REQUIRE(into_one.fastest == into_one.slowest);
  for (int i = 0; i < kRequests; ++i) {
    const auto span = kv_transfer_span(traces["dp8-ep8_simgrid_layer"], i);
    CHECK(span.second - span.first ==
          Approx(bytes / layers / into_one.slowest + into_one.latency_s).epsilon(0.01));
  }
  for (const auto& row : rows["dp8-ep8_simgrid_whole"])
    CHECK(std::stod(row[kColTransferS]) == Approx(bytes / into_one.slowest).epsilon(0.01));
  // A 1M-token prompt (32 chunks): the analytic bound streams from the first chunk, simgrid streams the
  // whole prompt's layers within the last chunk's step; they agree while the link carries the 56.6 GB
  // within that step (~0.16 s of wire beside a multi-second last chunk at 1M context).
  constexpr int64_t kOneMPrompt = (int64_t{1} << 20) - 16;  // GLM-5.3's context less 16 output tokens
  const std::string one_m = dir.file("one_m.jsonl");
  testing::write_uniform_workload(one_m, 1, 0.0, kOneMPrompt, 16);
  std::map<std::string, double> one_m_s;
  for (const char* backend : {"analytic", "simgrid"}) {
    for (const char* mode : {"whole", "layer"}) {
      const std::string name = std::string("one_m_") + backend + "_" + mode;
      REQUIRE(
          run_tokenline(sim_args(one_m, dir.file(name),
                                 std::string("--cluster h200x16-ib --pd 1P1D --parallel tp8,tp8 --backend ") +
                                     backend + " --pd-transfer " + mode),
                        dir)
              .exit_code == 0);
      const auto span = kv_transfer_span(read_json(dir.file(name + "/trace.json")), 0);
      one_m_s[name] = span.second - span.first;
    }
  }
  CHECK(one_m_s["one_m_simgrid_whole"] == Approx(one_m_s["one_m_analytic_whole"]).epsilon(1e-3));
  CHECK(one_m_s["one_m_simgrid_layer"] == Approx(one_m_s["one_m_analytic_layer"]).epsilon(0.01));
  CHECK(one_m_s["one_m_simgrid_layer"] < 2 * one_m_s["one_m_simgrid_whole"] / layers);
  // Deterministic: a second run writes the same bytes.
  const std::string again = dir.file("again");
  REQUIRE(run_tokenline(sim_args(workload, again,
                                 "--cluster h200x16-ib --pd 1P1D --parallel tp8,dp8-ep8 --backend simgrid "
                                 "--pd-transfer layer"),
                        dir)
              .exit_code == 0);
  for (const char* f : {"metrics.json", "requests.csv", "trace.json", "links.json"}) {
    INFO(f);
    CHECK(testing::read_all(dir.file("dp8-ep8_simgrid_layer") + "/" + f) ==
          testing::read_all(again + "/" + f));
  }
}

TEST_CASE("Layer streaming on simgrid leaves the prefill steps and their seeded MoE skew draws as they are") {
  // The stream prices each last-chunk step before it runs (SimgridBackend::price_ahead); the step must then
  // run at that price, drawing its expert skew once, so the prefill instance steps as in whole mode.
  TestDir dir("pd_simgrid_layer_skew");
  const std::string workload = testing::source_file("workloads/data/mooncake_conversation_head.jsonl");
  std::map<std::string, std::vector<std::pair<double, double>>> prefill_steps;
  for (const char* backend : {"analytic", "simgrid"}) {
    for (const char* mode : {"whole", "layer"}) {
      const std::string name = std::string(backend) + "_" + mode;
      const auto r = run_tokenline(
          sim_args(workload, dir.file(name),
                   std::string("--cluster h200x16-ib --pd 1P1D --expert-skew zipf:1.2 --max-requests 40 "
                               "--backend ") +
                       backend + " --pd-transfer " + mode),
          dir);
      INFO(name << ": " << r.stderr_text);
      REQUIRE(r.exit_code == 0);
      prefill_steps[name] = step_spans(read_json(dir.file(name + "/trace.json")), "instance 0 ");
    }
  }
  const auto& whole = prefill_steps["simgrid_whole"];
  REQUIRE(whole.size() > 1);
  CHECK(prefill_steps["simgrid_layer"] == whole);
  const auto& analytic = prefill_steps["analytic_layer"];
  REQUIRE(analytic.size() == whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    const double simgrid_s =
        prefill_steps["simgrid_layer"][i].second - prefill_steps["simgrid_layer"][i].first;
    CHECK(simgrid_s == Approx(analytic[i].second - analytic[i].first).epsilon(1e-3));
  }
}

}  // namespace tokenline
