// Whole `tokenline sim` runs with prefill/decode disaggregation, DP attention ranks, MoE routing skew
// and MTP, as separate processes (SimGrid allows one simulation per process).
#include "sim/driver/pd_simulation.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>

#include "cost/pd_link.h"
#include "tests/cli/tokenline_process.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

using testing::read_all;
using testing::read_csv_rows;
using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

// requests.csv columns
constexpr size_t kColFirstToken = 2;
constexpr size_t kColInstance = 8;
constexpr size_t kColStatus = 9;
constexpr size_t kColDecodeInstance = 10;
constexpr size_t kColTransferBytes = 11;
constexpr size_t kColTransferS = 12;

constexpr int64_t kOneM = int64_t{1} << 20;  // GLM-5.3's context
constexpr int64_t kOneMOutput = 16;
constexpr int64_t kOneMPrompt = kOneM - kOneMOutput;  // prompt + output within the context

std::string head_workload() {
  return testing::source_file("workloads/data/mooncake_conversation_head.jsonl");
}

std::string sim(const std::string& workload, const std::string& out, const std::string& extra) {
  // The seed's model (tokenline sim's default time source would be the shipped h200-sglang profile).
  return "sim --roofline --workload '" + workload + "' --out '" + out + "' " + extra;
}

CostModel glm(const char* parallel) {
  const ModelConfig model = model_preset("glm-5.3");
  return make_cost_model(model, parse_parallel(parallel, "test"), model.default_kv_layout,
                         load_hardware("h200"));
}

double ms(const nlohmann::json& metrics, const char* what, const char* stat) {
  return metrics["latency_ms"][what][stat].get<double>();
}

void check_conserved(const nlohmann::json& m) {
  const auto& r = m["requests"];
  CHECK(r["arrived"].get<int64_t>() > 0);
  CHECK(r["arrived"].get<int64_t>() == r["completed"].get<int64_t>() + r["rejected"].get<int64_t>());
  CHECK(r["in_flight_at_end"].get<int64_t>() == 0);
}

// n requests of `prompt` / `output` tokens arriving at once through `sim ... flags`: the metrics, every
// request completed; o/requests.csv in dir.
nlohmann::json all_at_once(const TestDir& dir, int n, int64_t prompt, int64_t output,
                           const std::string& flags) {
  const std::string workload = dir.file("w.jsonl");
  testing::write_uniform_workload(workload, n, 0.0, prompt, output);
  const auto r = run_tokenline(sim(workload, dir.file("o"), flags), dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  check_conserved(m);
  CHECK(m["requests"]["completed"].get<int64_t>() == n);
  return m;
}

// The shortest time to first token in dir's o/requests.csv, in ms.
double first_ttft_ms(const TestDir& dir) {
  double first = 1e300;
  for (const auto& row : read_csv_rows(dir.file("o/requests.csv")))
    first = std::min(first, 1e3 * (std::stod(row[kColFirstToken]) - std::stod(row[1])));
  return first;
}

}  // namespace

TEST_CASE("A 1M-token hand-off moves 56.6 GB in the time its link gives", "[pd_simulation]") {
  TestDir dir("pd_one_m");
  const std::string workload = dir.file("one_m.jsonl");
  testing::write_uniform_workload(workload, 1, 0.0, kOneMPrompt, kOneMOutput);
  const CostModel cm = glm("tp8");  // a tp8 rank holds a 1M request; its 8 GPUs send their shards at once
  const double bytes = pd_transfer(cm, kOneMPrompt).total_bytes();
  CHECK(bytes / 1e9 == Approx(56.6).margin(0.05));
  std::map<std::string, double> seconds;
  for (const auto& [name, link] : {std::pair{"nvlink", PdLink::kNvlink}, std::pair{"ib200", PdLink::kIb200},
                                   std::pair{"ib400", PdLink::kIb400}}) {
    INFO(name);
    const auto r = run_tokenline(
        sim(workload, dir.file(name), std::string("--parallel tp8 --pd 1P1D --pd-link ") + name), dir);
    REQUIRE(r.exit_code == 0);
    const auto rows = read_csv_rows(dir.file(std::string(name) + "/requests.csv"));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0][kColStatus] == "completed");
    CHECK(rows[0][kColInstance] == "0");
    CHECK(rows[0][kColDecodeInstance] == "1");
    CHECK(std::stod(rows[0][kColTransferBytes]) == Approx(bytes).margin(1));
    const double expected_s = pd_link_rate(link, cm, cm.parallel.tp).time_s(bytes);
    CHECK(std::stod(rows[0][kColTransferS]) == Approx(expected_s).margin(1e-6));
    seconds[name] = std::stod(rows[0][kColTransferS]);
  }
  CHECK(seconds["nvlink"] < seconds["ib400"]);
  CHECK(seconds["ib400"] == Approx(seconds["ib200"] / 2).epsilon(1e-3));
  // Streaming layer by layer hides all but the last layer's share behind the 32-chunk prefill.
  const auto r = run_tokenline(
      sim(workload, dir.file("layer"), "--parallel tp8 --pd 1P1D --pd-link ib200 --pd-transfer layer"), dir);
  REQUIRE(r.exit_code == 0);
  const auto rows = read_csv_rows(dir.file("layer/requests.csv"));
  CHECK(std::stod(rows[0][kColTransferS]) < seconds["ib200"] / 10);
  CHECK(std::stod(rows[0][kColFirstToken]) <
        std::stod(read_csv_rows(dir.file("ib200/requests.csv"))[0][kColFirstToken]));
}

TEST_CASE("PD runs conserve requests and replay byte for byte", "[pd_simulation]") {
  TestDir dir("pd_conservation");
  for (const char* layout :
       {"--pd 1P1D", "--pd 2P1D --router least-load", "--pd 1P2D --parallel tp8,dp8-ep8,dp8-ep8",
        "--pd 1P1D --pd-transfer layer --pd-link ib200 --kv-pages 600"}) {
    INFO(layout);
    for (const char* out : {"a", "b"}) {
      const auto r = run_tokenline(
          sim(head_workload(), dir.file(out), std::string(layout) + " --max-requests 120"), dir);
      REQUIRE(r.exit_code == 0);
    }
    const auto m = read_json(dir.file("a/metrics.json"));
    check_conserved(m);
    CHECK(m["requests"]["arrived"].get<int64_t>() == 120);
    for (const char* file : {"metrics.json", "requests.csv", "trace.json"})
      CHECK(read_all(dir.file(std::string("a/") + file)) == read_all(dir.file(std::string("b/") + file)));
    int64_t completed = 0;
    for (const auto& row : read_csv_rows(dir.file("a/requests.csv"))) {
      if (row[kColStatus] != "completed") {  // too long for a 600-page rank: rejected, never lost
        CHECK((row[kColStatus] == "never_fits_kv" || row[kColStatus] == "never_fits_decode_kv"));
        CHECK(row[kColDecodeInstance].empty());
        continue;
      }
      ++completed;
      CHECK(!row[kColDecodeInstance].empty());
      CHECK(std::stod(row[kColTransferBytes]) > 0);
    }
    CHECK(completed == m["requests"]["completed"].get<int64_t>());
    CHECK(completed > 100);
  }
}

TEST_CASE("DP attention, skew and MTP configurations conserve requests and replay byte for byte",
          "[pd_simulation]") {
  TestDir dir("dp_conservation");
  for (const char* layout :
       {"--parallel dp8-ep8 --dp-assign least-load --expert-skew zipf:1.2 --mtp 2",
        "--parallel dp4-tp2-ep8 --dp-assign prefix-aware --eplb-redundant 16 --mtp 1 "
        "--mtp-accept 0.6 --mtp-accept-std 0.2",
        "--parallel dp8-ep8 --instances 2 --router prefix-aware --reservation incremental",
        "--pd 2P2D --parallel tp8,tp8,dp8-ep8,dp8-ep8 --mtp 2 --expert-skew zipf:1.0"}) {
    INFO(layout);
    for (const char* out : {"a", "b"}) {
      const auto r = run_tokenline(
          sim(head_workload(), dir.file(out), std::string(layout) + " --max-requests 150 --seed 11"), dir);
      REQUIRE(r.exit_code == 0);
    }
    check_conserved(read_json(dir.file("a/metrics.json")));
    for (const char* file : {"metrics.json", "requests.csv", "trace.json"})
      CHECK(read_all(dir.file(std::string("a/") + file)) == read_all(dir.file(std::string("b/") + file)));
  }
}

TEST_CASE("A full decode pool back-pressures prefill and loses nothing", "[pd_simulation]") {
  // Decode ranks of 40 pages hold two 1000-token requests; 60 arrive at once.
  TestDir dir("pd_backpressure");
  const auto m = all_at_once(dir, 60, 1000, 200, "--parallel tp8 --pd 1P1D --kv-pages 40");
  // Decode admits two at a time, so time to first token grows across the queue ...
  CHECK(ms(m, "ttft", "max") > 10 * first_ttft_ms(dir));
  // ... and the reservations keep the decode pool within its 40 pages.
  CHECK(m["instances"][1]["kv_pages"]["peak"].get<int64_t>() <= 40);
  CHECK(m["instances"][1]["kv_pages"]["peak"].get<int64_t>() > 20);
}

TEST_CASE("Decode request slots hold hand-offs back: the wait is time to first token, not per token",
          "[pd_simulation]") {
  // 24 requests at once; each decode rank runs at most 2 (SGLang's decode pre-allocation stops at
  // max_running_requests). The others wait before their transfer, so their first token comes late and
  // every request then decodes in a batch of at most 2: TPOT stays that batch's step time.
  TestDir dir("pd_slots");
  const auto m = all_at_once(dir, 24, 1000, 64, "--parallel tp8 --pd 1P1D --max-running 2");
  CHECK(ms(m, "tpot", "max") < 1.5 * ms(m, "tpot", "p50"));
  CHECK(ms(m, "ttft", "max") > 5 * first_ttft_ms(dir));
  CHECK(ms(m, "ttft", "max") > 8 * 63 * ms(m, "tpot", "p50"));  // behind 11 pairs of 63-step decodes
}

TEST_CASE("The prefill instances take their own memory fraction and max running, the decode ones not",
          "[pd_simulation]") {
  // 40 requests at once; SGLang PD recipes give prefill workers their own mem-fraction-static and
  // max-running-requests. Prefill with 2 running at most takes 20 steps; its pool shrinks with its fraction.
  const std::string both = "--model deepseek-v3 --parallel tp8 --pd 1P1D --mem-fraction 0.9";
  TestDir same_dir("pd_prefill_same");
  const auto same = all_at_once(same_dir, 40, 1000, 50, both);
  TestDir own_dir("pd_prefill_own");
  const auto own =
      all_at_once(own_dir, 40, 1000, 50, both + " --prefill-mem-fraction 0.75 --prefill-max-running 2");
  const auto capacity = [](const nlohmann::json& m, int i) {
    return m["instances"][i]["kv_pages"]["capacity"].get<int64_t>();
  };
  const auto steps = [](const nlohmann::json& m, int i) { return m["instances"][i]["steps"].get<int64_t>(); };
  CHECK(capacity(same, 0) == capacity(same, 1));
  CHECK(capacity(own, 0) < capacity(same, 0));
  CHECK(capacity(own, 1) == capacity(same, 1));
  CHECK(steps(same, 0) < 20);
  CHECK(steps(own, 0) >= 20);
}

TEST_CASE("A request that fits prefill but never decode is rejected with its reason", "[pd_simulation]") {
  TestDir dir("pd_bad");
  const std::string workload = dir.file("w.jsonl");
  {
    std::ofstream out(workload);
    out << "{\"arrival_s\": 0, \"input_tokens\": 640, \"output_tokens\": 1}\n"     // 10 pages on both sides
        << "{\"arrival_s\": 0, \"input_tokens\": 600, \"output_tokens\": 100}\n";  // 10 prefill, 11 decode
  }
  auto r = run_tokenline(
      sim(workload, dir.file("o"), "--parallel tp8 --pd 1P1D --kv-pages 10 --no-prefix-cache"), dir);
  REQUIRE(r.exit_code == 0);
  const auto rows = read_csv_rows(dir.file("o/requests.csv"));
  REQUIRE(rows.size() == 2);
  std::map<std::string, int> statuses;
  for (const auto& row : rows) ++statuses[row[kColStatus]];
  CHECK(statuses["completed"] == 1);
  CHECK(statuses["never_fits_decode_kv"] == 1);
  const auto m = read_json(dir.file("o/metrics.json"));
  check_conserved(m);
  CHECK(m["requests"]["rejected_by_reason"]["never_fits_decode_kv"].get<int64_t>() == 1);

  // A decode pool that cannot hold even one request is refused before running, with the reason.
  r = run_tokenline(sim(workload, dir.file("refused"), "--parallel tp8 --pd 1P1D --kv-pages 5"), dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("--pd") != std::string::npos);
  CHECK(r.stderr_text.find("smallest request needs 10 pages") != std::string::npos);
  r = run_tokenline(sim(workload, dir.file("badpd"), "--pd 1X1D"), dir);
  CHECK(r.exit_code == 2);
  r = run_tokenline(sim(workload, dir.file("badlink"), "--pd 1P1D --pd-link ethernet"), dir);
  CHECK(r.exit_code == 2);
}

TEST_CASE("PD trace: kv_transfer spans and flows from the last prefill step to the first decode step",
          "[pd_simulation]") {
  TestDir dir("pd_trace");
  REQUIRE(
      run_tokenline(sim(head_workload(), dir.file("o"), "--pd 1P1D --max-requests 40 --trace-detail op"), dir)
          .exit_code == 0);
  const auto trace = read_json(dir.file("o/trace.json"));
  std::map<int64_t, double> flow_start, flow_end, transfer_end;
  std::map<std::pair<int, double>, int> step_ranks;  // (pid, ts) -> rank threads with a step span
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "s") flow_start[e["id"].get<int64_t>()] = e["ts"].get<double>();
    if (ph == "f") flow_end[e["id"].get<int64_t>()] = e["ts"].get<double>();
    if (ph == "e" && e["name"] == "kv_transfer") transfer_end[e["id"].get<int64_t>()] = e["ts"].get<double>();
    if (ph == "X" && e["name"] == "step") ++step_ranks[{e["pid"].get<int>(), e["ts"].get<double>()}];
  }
  CHECK(transfer_end.size() == 40);
  CHECK(flow_start.size() == 40);
  CHECK(!flow_end.empty());
  for (const auto& [id, end] : flow_end) {
    CHECK(flow_start.at(id) < transfer_end.at(id));
    CHECK(transfer_end.at(id) <= end);  // decode starts after the KV arrived
  }
  // dp8 at op detail: every rank thread has a step span at every step start, idle or not (lockstep).
  for (const auto& [key, ranks] : step_ranks) CHECK(ranks == 8);
}

TEST_CASE("MTP with acceptance 0 is plain decoding plus the draft cost, more acceptance lowers TPOT",
          "[pd_simulation]") {
  TestDir dir("mtp");
  const std::string workload = dir.file("w.jsonl");
  testing::write_uniform_workload(workload, 16, 0.0, 2000, 300);
  const std::string base = "--parallel tp8 --concurrency 16 ";
  REQUIRE(run_tokenline(sim(workload, dir.file("off"), base), dir).exit_code == 0);
  REQUIRE(run_tokenline(sim(workload, dir.file("a0"), base + "--mtp 2 --mtp-accept 0"), dir).exit_code == 0);
  REQUIRE(run_tokenline(sim(workload, dir.file("a5"), base + "--mtp 2 --mtp-accept 0.5 --mtp-accept-std 0.1"),
                        dir)
              .exit_code == 0);
  REQUIRE(run_tokenline(sim(workload, dir.file("a9"), base + "--mtp 2 --mtp-accept 0.9"), dir).exit_code ==
          0);
  const auto off = read_json(dir.file("off/metrics.json"));
  const auto a0 = read_json(dir.file("a0/metrics.json"));
  const auto a5 = read_json(dir.file("a5/metrics.json"));
  const auto a9 = read_json(dir.file("a9/metrics.json"));
  for (const auto* m : {&off, &a0, &a5, &a9}) check_conserved(*m);
  // Acceptance 0: one token per step as without MTP, each step dearer by the draft layer and the
  // verification of the drafts (3 tokens per request: more KV reads, more experts touched).
  CHECK(a0["instances"][0]["steps"].get<int64_t>() == off["instances"][0]["steps"].get<int64_t>());
  CHECK(a0["latency_ms"]["itl"]["count"].get<int64_t>() == off["latency_ms"]["itl"]["count"].get<int64_t>());
  CHECK(ms(a0, "tpot", "mean") > ms(off, "tpot", "mean"));
  CHECK(ms(a5, "tpot", "mean") < ms(a0, "tpot", "mean"));
  CHECK(ms(a9, "tpot", "mean") < ms(a5, "tpot", "mean"));
  CHECK(ms(a9, "tpot", "mean") < ms(off, "tpot", "mean"));
}

TEST_CASE("Routing skew slows the simulated steps and EPLB speeds them up again", "[pd_simulation]") {
  TestDir dir("skew");
  const std::string workload = dir.file("w.jsonl");
  testing::write_uniform_workload(workload, 64, 0.0, 4000, 64);
  const std::string base = "--concurrency 64 --seed 3 ";
  double last = 0;
  for (const char* skew : {"uniform", "zipf:0.8", "zipf:1.6"}) {
    const std::string out = std::string("s_") + skew;
    REQUIRE(run_tokenline(sim(workload, dir.file(out), base + "--expert-skew " + skew), dir).exit_code == 0);
    const double e2e = ms(read_json(dir.file(out + "/metrics.json")), "e2e", "max");
    CHECK(e2e > last);
    last = e2e;
  }
  REQUIRE(
      run_tokenline(sim(workload, dir.file("eplb"), base + "--expert-skew zipf:1.6 --eplb-redundant 32"), dir)
          .exit_code == 0);
  CHECK(ms(read_json(dir.file("eplb/metrics.json")), "e2e", "max") < last);
  CHECK(run_tokenline(sim(workload, dir.file("bad"), "--expert-skew zipf:x"), dir).exit_code == 2);
  {
    std::ofstream hist(dir.file("hist.txt"));
    hist << "1,2,3\n";  // GLM-5.3 has 256 routed experts
  }
  const auto r = run_tokenline(
      sim(workload, dir.file("badhist"), "--expert-skew histogram:" + dir.file("hist.txt")), dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("256 expert counts") != std::string::npos);
  {
    std::ofstream hist(dir.file("hot.txt"));
    for (int layer = 0; layer < 3; ++layer) {
      for (int e = 0; e < 256; ++e)
        hist << (e == 0 ? "" : ",") << (e < 8 ? 400 : 1);  // 8 hot experts on EP rank 0
      hist << "\n";
    }
  }
  REQUIRE(run_tokenline(
              sim(workload, dir.file("hot"), base + "--expert-skew histogram:" + dir.file("hot.txt")), dir)
              .exit_code == 0);
  REQUIRE(run_tokenline(sim(workload, dir.file("hot_eplb"),
                            base + "--expert-skew histogram:" + dir.file("hot.txt") + " --eplb-redundant 0"),
                        dir)
              .exit_code == 0);
  CHECK(ms(read_json(dir.file("hot/metrics.json")), "e2e", "max") >
        ms(read_json(dir.file("s_uniform/metrics.json")), "e2e", "max"));
  CHECK(ms(read_json(dir.file("hot_eplb/metrics.json")), "e2e", "max") <
        ms(read_json(dir.file("hot/metrics.json")), "e2e", "max"));
}

TEST_CASE(
    "issue 43: the disaggregated path's terms move a disaggregated first token and never an aggregated run",
    "[pd_simulation]") {
  TestDir dir("pd_path_costs");
  // One DeepSeek-V3 request of 256 prompt tokens (alone, so nothing queues), priced by h200-sglang.
  const auto run = [&](const std::string& name, const std::string& layout, const std::string& terms) {
    const std::string out = dir.file(name);
    const auto r = run_tokenline("sim --model deepseek-v3 " + layout +
                                     " --workload synthetic:n=1,input=fixed:256,output=fixed:64 --profile "
                                     "h200-sglang --profile-set first_token_latency_s=0" +
                                     terms + " --out '" + out + "'",
                                 dir);
    REQUIRE(r.exit_code == 0);
    const auto rows = read_csv_rows(out + "/requests.csv");
    REQUIRE(rows.size() == 1);
    return rows[0];
  };
  const std::string pd = "--parallel tp8,tp8 --pd 1P1D";
  // Both terms 0 unless set (the profile's own values are overridden).
  const std::string none = ",pd_first_token_latency_s=0,pd_handoff_per_token_s=0";
  const auto plain = run("plain", pd, none);
  // pd_first_token_latency_s: the first token 0.25 s later, nothing else (the same arrival, hand-off and
  // finish: no step moved).
  const auto late = run("late", pd, ",pd_first_token_latency_s=0.25,pd_handoff_per_token_s=0");
  CHECK(std::stod(late[kColFirstToken]) == Approx(std::stod(plain[kColFirstToken]) + 0.25).margin(1e-9));
  CHECK(late[1] == plain[1]);
  CHECK(late[3] == plain[3]);
  CHECK(late[kColTransferS] == plain[kColTransferS]);
  // pd_handoff_per_token_s: the hand-off holds its sender 256 x 100 us = 25.6 ms longer, and the first
  // token (streamed with the first decode step after the KV arrives) comes at least that much later.
  const auto posted = run("posted", pd, ",pd_first_token_latency_s=0,pd_handoff_per_token_s=1e-4");
  CHECK(std::stod(posted[kColTransferS]) == Approx(std::stod(plain[kColTransferS]) + 0.0256).margin(1e-9));
  CHECK(std::stod(posted[kColFirstToken]) >= std::stod(plain[kColFirstToken]) + 0.0256 - 1e-9);
  // An aggregated run does not read them: its requests and latencies are byte for byte those without
  // (metrics.json also records the command's --profile-set, so its latency block is compared).
  run("agg", "--parallel tp8", none);
  run("agg_terms", "--parallel tp8", ",pd_first_token_latency_s=0.25,pd_handoff_per_token_s=1e-4");
  CHECK(read_all(dir.file("agg/requests.csv")) == read_all(dir.file("agg_terms/requests.csv")));
  CHECK(read_json(dir.file("agg/metrics.json"))["latency_ms"].dump() ==
        read_json(dir.file("agg_terms/metrics.json"))["latency_ms"].dump());
}

}  // namespace tokenline
