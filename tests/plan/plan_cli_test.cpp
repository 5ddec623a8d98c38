// `tokenline plan` run as a process on a small case (llama-3.1-8b on 2 GPUs, 20 synthetic requests, 3 probes
// per candidate): determinism, shards + merge, the impossible SLO, bad input.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/traces/test_dir.h"

namespace tokenline {
namespace {

using testing::read_all;
using testing::TestDir;

const std::string kSmallPlan =
    "plan --model llama-3.1-8b --hardware h200 --gpus 2 "
    "--workload synthetic:n=20,rate=2,input=uniform:256:2048,output=uniform:16:64,seed=1 "
    "--chunks 4096 --max-running-set 64 --probes 3 --jobs 2";

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Run run(const std::string& args, const TestDir& dir, const std::string& tag) {
  const std::string out = dir.file(tag + ".stdout"), err = dir.file(tag + ".stderr");
  const std::string command =
      std::string("'") + TOKENLINE_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(command.c_str());
  return Run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out), read_all(err)};
}

// A plan that must succeed, with its plan.json: `args` written into dir/tag.
struct PlanRun {
  Run run;
  nlohmann::json plan;
};

PlanRun plan_run(const std::string& args, const TestDir& dir, const std::string& tag) {
  Run r = run(args + " --out " + dir.file(tag), dir, tag);
  REQUIRE(r.exit_code == 0);
  return {std::move(r), nlohmann::json::parse(read_all(dir.file(tag + "/plan.json")))};
}

TEST_CASE("plan: the same command twice writes byte-identical plan.csv and plan.json", "[plan][cli]") {
  TestDir dir("plan-determinism");
  const Run a = run(kSmallPlan + " --slo ttft=2s,tpot=50ms --out " + dir.file("a"), dir, "a");
  const Run b = run(kSmallPlan + " --slo ttft=2s,tpot=50ms --out " + dir.file("b"), dir, "b");
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  for (const char* f : {"plan.csv", "plan.json", "pareto.svg"}) {
    const std::string left = read_all(dir.file(std::string("a/") + f));
    CHECK_FALSE(left.empty());
    CHECK(left == read_all(dir.file(std::string("b/") + f)));
  }
  const nlohmann::json plan = nlohmann::json::parse(read_all(dir.file("a/plan.json")));
  CHECK(plan["counts"]["candidates"] == 4);
  CHECK(plan["counts"]["meets"].get<int>() >= 1);
  CHECK(plan["best"]["sglang"].size() >= 2);
  CHECK(a.out.find("best: ") != std::string::npos);
  CHECK(a.out.find("reproduce: tokenline sim ") != std::string::npos);
  CHECK(a.out.find("--tp-size") != std::string::npos);
  // not a terminal: one summary line, no progress
  CHECK(a.err.find('\r') == std::string::npos);
  CHECK(a.err.find("tokenline plan: 4 of 4 candidates evaluated") != std::string::npos);
}

TEST_CASE("plan: shards merged give the bytes of one unsharded run", "[plan][cli]") {
  TestDir dir("plan-shards");
  const std::string slo = " --slo ttft=2s,tpot=50ms";
  REQUIRE(run(kSmallPlan + slo + " --out " + dir.file("whole"), dir, "w").exit_code == 0);
  REQUIRE(run(kSmallPlan + slo + " --shard 1/3 --out " + dir.file("s1"), dir, "s1").exit_code == 0);
  REQUIRE(run(kSmallPlan + slo + " --shard 2/3 --out " + dir.file("s2"), dir, "s2").exit_code == 0);
  REQUIRE(run(kSmallPlan + slo + " --shard 3/3 --out " + dir.file("s3"), dir, "s3").exit_code == 0);
  CHECK(std::filesystem::exists(dir.file("s2/plan-partial-2-of-3.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("s2/plan.csv")));
  const Run merged = run("plan merge " + dir.file("s3") + " " + dir.file("s1") + " " + dir.file("s2") +
                             " --out " + dir.file("merged"),
                         dir, "m");
  REQUIRE(merged.exit_code == 0);
  for (const char* f : {"plan.csv", "plan.json", "pareto.svg"}) {
    CHECK(read_all(dir.file(std::string("whole/") + f)) == read_all(dir.file(std::string("merged/") + f)));
  }
  const Run missing = run("plan merge " + dir.file("s1") + " --out " + dir.file("m2"), dir, "m2");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("all 3 shards") != std::string::npos);
}

// A workload far below what llama-3.1-8b serves on 2 GPUs: its true limit lies above 8x the trace's rate
// (0.5 req/s), the top of the search's first range.
const std::string kLightPlan =
    "plan --model llama-3.1-8b --hardware h200 --gpus 2 "
    "--workload synthetic:n=120,rate=0.5,input=uniform:1024:2048,output=uniform:32:64,seed=2 "
    "--chunks 4096 --max-running-set 64 --probes 4 --jobs 2 --slo ttft=1s,tpot=50ms";

TEST_CASE("plan: a candidate that meets the SLO at the top of the search widens it to a true limit",
          "[plan][cli]") {
  TestDir dir("plan-widen");
  const Run capped = run(kLightPlan + " --rate-range 0.015625:4 --out " + dir.file("capped"), dir, "c");
  REQUIRE(capped.exit_code == 0);
  const nlohmann::json narrow = nlohmann::json::parse(read_all(dir.file("capped/plan.json")));
  int capped_rows = 0;
  for (const auto& row : narrow["rows"]) capped_rows += row["rate_capped"].get<bool>() ? 1 : 0;
  CHECK(capped_rows >= 1);  // the old range: rows that meet at its top are lower bounds, and say so
  CHECK(capped.out.find(">=") != std::string::npos);
  CHECK(capped.out.find("not a ranking") != std::string::npos);

  const Run wide = run(kLightPlan + " --out " + dir.file("wide"), dir, "w");
  REQUIRE(wide.exit_code == 0);
  const nlohmann::json plan = nlohmann::json::parse(read_all(dir.file("wide/plan.json")));
  REQUIRE(plan["counts"]["meets"].get<int>() >= 1);
  double best_rate = 0;
  for (const auto& row : plan["rows"]) {
    if (row["status"] != "meets") continue;
    CHECK_FALSE(row["rate_capped"].get<bool>());  // every limit found: a probe above it missed
    best_rate = std::max(best_rate, row["rate_per_s"].get<double>());
  }
  CHECK(best_rate > 4.0);  // above 8x the trace's rate
  CHECK(wide.out.find(">=") == std::string::npos);
}

TEST_CASE("plan: an impossible SLO says so with the closest candidates and still writes the files",
          "[plan][cli]") {
  TestDir dir("plan-impossible");
  const Run r = run(kSmallPlan + " --slo ttft=1ms,tpot=0.5ms --out " + dir.file("o"), dir, "o");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("no configuration meets p90 TTFT <= 1 ms and p90 TPOT <= 0.5 ms") != std::string::npos);
  CHECK(r.out.find("  #") != std::string::npos);  // the closest candidates, one a line
  const nlohmann::json plan = nlohmann::json::parse(read_all(dir.file("o/plan.json")));
  CHECK(plan["counts"]["meets"] == 0);
  CHECK(plan["best"].is_null());
  CHECK(plan["rows"].size() == 4);
  // the ledger's floors already miss a 0.5 ms TPOT: pruned without simulation, counted by reason
  CHECK((plan["pruned_by_reason"].contains("tpot-floor") || plan["pruned_by_reason"].contains("ttft-floor")));
  CHECK(read_all(dir.file("o/plan.csv")).find("pruned") != std::string::npos);
  CHECK(read_all(dir.file("o/pareto.svg")).find("no configuration meets the SLO") != std::string::npos);
}

TEST_CASE("plan --profile prices every probe from the profile and records it", "[plan][cli]") {
  TestDir dir("plan-profile");
  const std::string slo = " --slo ttft=2s,tpot=50ms";
  const auto [roof, a] = plan_run(kSmallPlan + slo + " --roofline", dir, "roof");
  const auto [prof, b] = plan_run(kSmallPlan + slo + " --profile h200-sglang", dir, "prof");
  CHECK(a["setup"]["profile"] == "");
  CHECK(b["setup"]["profile"] == "h200-sglang");
  // the probes ran with it: the reproduce line, and measured kernels give other latencies than rooflines
  CHECK(prof.out.find("reproduce: tokenline sim ") != std::string::npos);
  CHECK(prof.out.find("--profile h200-sglang") != std::string::npos);
  CHECK(roof.out.find(" --profile ") == std::string::npos);
  CHECK(prof.out.find("; priced by profile h200-sglang\n") != std::string::npos);
  CHECK(roof.out.find("; priced by the roofline and the seed's engine (--roofline)\n") != std::string::npos);
  CHECK(roof.out.find(" --roofline ") != std::string::npos);  // its probes ran on the roofline
  REQUIRE(a["rows"].size() == b["rows"].size());
  const auto floor_of = [](const nlohmann::json& plan, int id) {
    for (const nlohmann::json& row : plan["rows"])
      if (row["id"] == id) return row["tpot_floor_s"].get<double>();
    return 0.0;
  };
  for (int id = 0; id < 4; ++id) {
    CHECK(floor_of(a, id) > 0);
    CHECK(floor_of(b, id) > floor_of(a, id));  // measured small-batch steps are slower than the roofline
  }
  // shards priced differently are not one plan
  REQUIRE(run(kSmallPlan + slo + " --roofline --shard 1/2 --out " + dir.file("s1"), dir, "s1").exit_code ==
          0);
  REQUIRE(run(kSmallPlan + slo + " --profile h200-sglang --shard 2/2 --out " + dir.file("s2"), dir, "s2")
              .exit_code == 0);
  const Run merged =
      run("plan merge " + dir.file("s1") + " " + dir.file("s2") + " --out " + dir.file("m"), dir, "m");
  CHECK(merged.exit_code == 2);
  CHECK(merged.err.find("equal setups") != std::string::npos);
}

TEST_CASE("plan without --profile, --engine or --roofline prices by the best available, as sim does",
          "[plan][cli]") {
  // issue 43: the default time source is the best available; plan chooses it as sim does. Llama-3.1-8B on
  // H200: SGLang's shipped h200-sglang measures its kernels (cli/time_source_choice.h).
  TestDir dir("plan-default-source");
  const std::string slo = " --slo ttft=2s,tpot=50ms";
  const auto [chosen, d] = plan_run(kSmallPlan + slo, dir, "d");
  const auto [named, n] = plan_run(kSmallPlan + slo + " --profile h200-sglang", dir, "n");
  CHECK(d["setup"]["profile"] == "h200-sglang");
  CHECK(d["setup"]["profile_defaulted"] == true);
  CHECK(n["setup"]["profile_defaulted"] == false);
  CHECK(chosen.err.find("priced by the best available, profile h200-sglang (the shipped profile for h200 x "
                        "sglang measures every kernel of llama-3.1-8b)") != std::string::npos);
  CHECK(chosen.out.find("; priced by profile h200-sglang, the best available (no --engine, --profile or "
                        "--roofline)\n") != std::string::npos);
  CHECK(chosen.out.find("--profile h200-sglang") != std::string::npos);  // the probes' reproduce line
  // the same pricing as naming the profile: the same rows
  CHECK(d["rows"] == n["rows"]);
  // shards of a defaulted plan merge into the plan the unsharded command writes
  REQUIRE(run(kSmallPlan + slo + " --shard 1/2 --out " + dir.file("s1"), dir, "s1").exit_code == 0);
  REQUIRE(run(kSmallPlan + slo + " --shard 2/2 --out " + dir.file("s2"), dir, "s2").exit_code == 0);
  const Run merged =
      run("plan merge " + dir.file("s1") + " " + dir.file("s2") + " --out " + dir.file("m"), dir, "m");
  REQUIRE(merged.exit_code == 0);
  CHECK(read_all(dir.file("m/plan.csv")) == read_all(dir.file("d/plan.csv")));
  // --roofline beside a profile is refused, as sim refuses it
  const Run both = run(kSmallPlan + slo + " --roofline --engine vllm --out " + dir.file("b"), dir, "b");
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--roofline") != std::string::npos);
}

TEST_CASE("plan --profile h200-vllm prints vLLM's launch lines", "[plan][cli]") {
  TestDir dir("plan-vllm");
  const Run r =
      run(kSmallPlan + " --slo ttft=2s,tpot=50ms --profile h200-vllm --out " + dir.file("o"), dir, "o");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  vLLM:\n") != std::string::npos);
  CHECK(r.out.find("vllm serve <llama-3.1-8b checkpoint> --tensor-parallel-size") != std::string::npos);
  CHECK(r.out.find("sglang") == std::string::npos);
  const nlohmann::json plan = nlohmann::json::parse(read_all(dir.file("o/plan.json")));
  CHECK(plan["setup"]["launch_engine"] == "vllm");
  CHECK(plan["best"]["vllm"].size() >= 2);
  CHECK_FALSE(plan["best"].contains("sglang"));
}

TEST_CASE("plan: bad input is one message and exit 2", "[plan][cli]") {
  TestDir dir("plan-bad");
  const std::string base = "plan --hardware h200 --gpus 2 --out " + dir.file("o");
  const Run model = run(base + " --model no-such-model --slo ttft=2s", dir, "model");
  const Run slo = run(base + " --model llama-3.1-8b --slo ttft=fast", dir, "slo");
  const Run shard = run(base + " --model llama-3.1-8b --slo ttft=2s --shard 3/2", dir, "shard");
  const Run gpus = run("plan --model llama-3.1-8b --slo ttft=2s --out " + dir.file("o"), dir, "gpus");
  const Run profile =
      run(base + " --model llama-3.1-8b --slo ttft=2s --profile no-such-profile", dir, "prof");
  const Run set =
      run(base + " --model llama-3.1-8b --slo ttft=2s --profile-set step_cpu_overhead_s=1", dir, "set");
  for (const Run* r : {&model, &slo, &shard, &gpus, &profile, &set}) {
    CHECK(r->exit_code == 2);
    CHECK(std::count(r->err.begin(), r->err.end(), '\n') == 1);
  }
  CHECK(slo.err.find("--slo") != std::string::npos);
  CHECK(shard.err.find("--shard") != std::string::npos);
  CHECK(profile.err.find("no-such-profile") != std::string::npos);
  CHECK(set.err.find("--profile-set") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("o/probes")));  // refused before any simulation
}

TEST_CASE("plan: when every simulation fails it exits non-zero with the first failure's reason",
          "[plan][cli]") {
  // 2,048 GPUs of glm-5.3-tiny: every co-located candidate is more instances than sim takes. Before: exit 0,
  // "no configuration meets ... (TTFT p90 0.0 ms)" and no reason.
  TestDir dir("plan-all-failed");
  const Run r =
      run("plan --hardware h200 --gpus 2048 --model glm-5.3-tiny --no-pd --chunks 4096 "
          "--max-running-set 64 --probes 1 --slo ttft=2s,tpot=50ms --roofline --jobs 2 --out " +
              dir.file("o"),
          dir, "all-failed");
  CHECK(r.exit_code == 2);  // the simulations refused their input
  CHECK(r.err.find("tokenline plan: all 41 simulations failed; the first: 2048x tp1: exit 2: tokenline: "
                   "--instances: expected at most 1024") != std::string::npos);
  CHECK(r.err.find("(log: " + dir.file("o") + "/probes/c0-p0.log)") != std::string::npos);
}

TEST_CASE("plan: --rank cost over two hardware ranks by dollars per million tokens and follows the prices",
          "[plan][cli]") {
  TestDir dir("plan-cost");
  const std::string plan =
      "plan --model llama-3.1-8b --hardware h200,b200 --gpus 2 "
      "--workload synthetic:n=20,rate=2,input=uniform:256:2048,output=uniform:16:64,seed=1 "
      "--chunks 4096 --max-running-set 64 --probes 3 --jobs 2 --no-pd --slo ttft=2s,tpot=50ms --rank cost ";
  auto best_hardware = [&](const std::string& tag, const std::string& prices) {
    const Run r = run(plan + "--gpu-price " + prices + " --out " + dir.file(tag), dir, tag);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json p = nlohmann::json::parse(read_all(dir.file(tag + "/plan.json")));
    const auto& rows = p["rows"];
    REQUIRE(rows.size() >= 2);
    REQUIRE(rows[0]["status"] == "meets");
    double last = 0;
    for (const auto& row : rows) {  // meeting rows by ascending cost
      if (row["status"] != "meets") break;
      CHECK(row["usd_per_million_output_tokens"].get<double>() >= last);
      last = row["usd_per_million_output_tokens"].get<double>();
    }
    return rows[0]["hardware"].get<std::string>();
  };
  // The same simulations priced two ways: a nearly free B200 wins, a dear one loses.
  CHECK(best_hardware("cheap-b200", "4,0.01") == "b200");
  CHECK(best_hardware("dear-b200", "4,1000") == "h200");
}

}  // namespace
}  // namespace tokenline
