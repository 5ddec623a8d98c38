#include "calibrate/sim_point.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/input_error.h"
#include "tests/traces/test_dir.h"

using namespace tokenline;

namespace {

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

E2eLayout layout(int tp, int dp, int moe_tp, int moe_ep, int workers = 1) {
  E2eLayout l;
  l.tp = tp;
  l.attention_dp = dp;
  l.moe_tp = moe_tp;
  l.moe_ep = moe_ep;
  l.workers = workers;
  return l;
}

}  // namespace

TEST_CASE("CSV layouts map to tokenline's --parallel names", "[sim_point]") {
  CHECK(parallel_name(layout(8, 1, 8, 1), "x") == "tp8");
  CHECK(parallel_name(layout(8, 1, 1, 8), "x") == "tp8-ep8");
  CHECK(parallel_name(layout(1, 8, 1, 8), "x") == "dp8-ep8");
  CHECK(parallel_name(layout(2, 4, 1, 8), "x") == "dp4-tp2-ep8");
  CHECK(parallel_name(layout(1, 1, 1, 1), "x") == "tp1");
  // Llama rows carry moe_tp 1 / moe_ep 1 whatever their TP: no expert split to check on a dense layout.
  CHECK(parallel_name(layout(4, 1, 1, 1), "x") == "tp4");
  CHECK_THROWS_WITH(parallel_name(layout(8, 1, 2, 2), "e2e.csv:5"),
                    Catch::StartsWith("e2e.csv:5: moe_tp_size x moe_ep_size: expected the instance's GPUs"));
}

TEST_CASE("An aggregated point becomes a closed-loop synthetic sim run", "[sim_point]") {
  E2ePoint p;
  p.line = 7;
  p.model_path = "deepseek-ai/DeepSeek-R1";
  p.concurrency = 16;
  p.isl = 1024;
  p.osl = 8192;
  p.agg = layout(8, 1, 8, 1);
  SimPointOptions o;
  o.binary = "tokenline";
  // The benchmark's protocol: 2 warm-up and 20 measured requests per client, mixed steps.
  CHECK(request_count(p, o) == 22 * 16);
  CHECK(warmup_count(p, o) == 2 * 16);
  CHECK(joined(sim_arguments(p, "r1.json", "out/7", o)) ==
        "sim --model r1.json --hardware h200 --parallel tp8 --workload "
        "synthetic:n=352,input=fixed:1024,output=fixed:8192 --concurrency 16 --seed 0 --warmup 32 "
        "--mixed-steps on "
        "--out out/7");
  o.mixed_steps = false;
  o.prefill_margin = 1500;
  CHECK(joined(sim_arguments(p, "r1.json", "out/7", o)) ==
        "sim --model r1.json --hardware h200 --parallel tp8 --workload "
        "synthetic:n=352,input=fixed:1024,output=fixed:8192 --concurrency 16 --seed 0 --warmup 32 "
        "--max-prefill-tokens 2524 --out out/7");
  o.warmup_per_client = 0;  // no warm-up phase: no --warmup
  CHECK(joined(sim_arguments(p, "r1.json", "out/7", o)).find("--warmup") == std::string::npos);
  p.concurrency = 1;
  o.requests_per_client = 4;
  CHECK(request_count(p, o) == 32);  // min_requests
}

TEST_CASE("A disaggregated point lists prefill then decode layouts and --pd xPyD", "[sim_point]") {
  E2ePoint p;
  p.line = 9;
  p.mode = E2eMode::kDisaggregated;
  p.concurrency = 64;
  p.isl = 8192;
  p.osl = 1024;
  p.prefill = layout(8, 1, 8, 1, 2);
  p.decode = layout(1, 8, 1, 8);
  SimPointOptions o;
  o.binary = "tokenline";
  o.hardware = "hw.json";
  o.extra_args = {"--profile", "p"};
  const std::string args = joined(sim_arguments(p, "v3.json", "o", o));
  CHECK(args.find("--hardware hw.json --parallel tp8,tp8,dp8-ep8 --pd 2P1D") != std::string::npos);
  CHECK(args.find("--concurrency 64 --seed 0 --warmup 128 --profile p --out o") != std::string::npos);
}

TEST_CASE("A row's engine flags replace the benchmark's, and --sim-args and a fit's replace the row's",
          "[sim_point]") {
  E2ePoint p;
  p.line = 3;
  p.concurrency = 4;
  p.isl = 1024;
  p.osl = 1024;
  p.agg = layout(8, 1, 8, 1);
  p.sim_args = {"--mixed-steps",    "off", "--mem-fraction", "0.82", "--profile-set", "cuda_graph_max_bs=256",
                "--no-prefix-cache"};
  SimPointOptions o;
  o.binary = "tokenline";
  o.warmup_per_client = 0;
  const std::string head =
      "sim --model m.json --hardware h200 --parallel tp8 --workload "
      "synthetic:n=80,input=fixed:1024,output=fixed:1024 --concurrency 4 --seed 0 ";
  // The row's --mixed-steps off replaces calibrate's --mixed-steps on (sim refuses an option given twice);
  // without a --profile (the roofline) the row's profile terms stay out.
  CHECK(joined(sim_arguments(p, "m.json", "o", o)) ==
        head + "--mixed-steps off --mem-fraction 0.82 --no-prefix-cache --out o");
  o.extra_args = {"--profile=h200-sglang"};
  CHECK(joined(sim_arguments(p, "m.json", "o", o)) ==
        head +
            "--mixed-steps off --mem-fraction 0.82 --no-prefix-cache --profile=h200-sglang --profile-set "
            "cuda_graph_max_bs=256 --out o");
  // What-if options and a fit's values come last and win; every --profile-set merges into one, in order,
  // a later name replacing the row's (sim refuses a name given twice).
  o.extra_args = {"--profile", "h200-sglang", "--mem-fraction=0.9", "--profile-set",
                  "step_floor_per_layer_s=0.0001,cuda_graph_max_bs=512"};
  CHECK(joined(sim_arguments(p, "m.json", "o", o)) ==
        head +
            "--mixed-steps off --no-prefix-cache --profile h200-sglang --mem-fraction=0.9 --profile-set "
            "step_floor_per_layer_s=0.0001,cuda_graph_max_bs=512 --out o");
}

TEST_CASE("A row's own client protocol replaces the benchmark's counts and draws its lengths",
          "[sim_point]") {
  E2ePoint p;
  p.line = 5;
  p.mode = E2eMode::kDisaggregated;
  p.concurrency = 8;
  p.isl = 1024;
  p.osl = 8192;
  p.prefill = layout(8, 1, 8, 1);
  p.decode = layout(8, 1, 8, 1, 9);
  SimPointOptions o;
  o.binary = "tokenline";
  p.warmup_per_client = 2;
  p.requests_per_client = 10;
  p.length_range_ratio = 0.8;  // sa-bench: randint(int(0.8 x L), L + 1)
  CHECK(request_count(p, o) == 12 * 8);
  CHECK(warmup_count(p, o) == 16);
  const std::string args = joined(sim_arguments(p, "r1.json", "o", o));
  CHECK(args.find("--workload synthetic:n=96,input=uniform:819:1024,output=uniform:6553:8192 --concurrency 8 "
                  "--seed 0 --warmup 16") != std::string::npos);
  p.warmup_per_client = 0;  // the row's 0 wins over calibrate's 2: no warm-up phase
  CHECK(warmup_count(p, o) == 0);
  CHECK(joined(sim_arguments(p, "r1.json", "o", o)).find("--warmup") == std::string::npos);
  p.length_range_ratio = 1;
  p.isl = 1;  // a ratio that leaves nothing to draw stays fixed
  CHECK(joined(sim_arguments(p, "r1.json", "o", o)).find("input=fixed:1,output=fixed:8192") !=
        std::string::npos);
  p.length_range_ratio = 0.5;
  CHECK(joined(sim_arguments(p, "r1.json", "o", o)).find("input=fixed:1,output=uniform:4096:8192") !=
        std::string::npos);
}

TEST_CASE("A prediction is the mean over the requests after the warm-up", "[sim_point]") {
  const testing::TestDir scratch("sim-point");  // not the working directory: ctest runs from the tree
  const std::string dir = scratch.path().string();
  std::ofstream(dir + "/requests.csv")
      << "id,arrival_s,first_token_s,finish_s,input_tokens,output_tokens,cached_tokens,preemptions,instance,"
         "status,decode_instance,kv_transfer_bytes,kv_transfer_s\n"
      << "0,0.0,5.0,9.0,10,5,0,0,0,completed,,,\n"      // warm-up: left out
      << "1,0.0,0.1,0.5,10,5,0,0,0,completed,,,\n"      // TTFT 100 ms, TPOT 100 ms
      << "2,1.0,1.3,1.3,10,1,0,0,0,completed,,,\n"      // TTFT 300 ms, one token: no TPOT
      << "3,1.0,1.0,1.0,10,5,0,0,0,kv_too_small,,,\n";  // not completed
  const SimPrediction r = read_prediction(dir, 0, dir + "/log.txt", 1);
  REQUIRE(r.ok);
  CHECK(r.completed == 2);
  CHECK(r.ttft_ms == Approx(200.0));
  CHECK(r.tpot_ms == Approx(100.0));
  const SimPrediction all = read_prediction(dir, 0, dir + "/log.txt", 0);
  CHECK(all.completed == 3);
  CHECK(all.ttft_ms == Approx((5000.0 + 100 + 300) / 3));
}

TEST_CASE("A failed run's prediction says why", "[sim_point]") {
  const SimPrediction r = read_prediction("no/such/dir", 2, "no/such/log");
  CHECK_FALSE(r.ok);
  CHECK(r.error.starts_with("exit 2"));
}

TEST_CASE("option_value reads an option's last value in either spelling", "[sim_point]") {
  const std::vector<std::string> args = {"--mem-fraction",    "0.8",   "--mtp=2",
                                         "--no-prefix-cache", "--mtp", "3"};
  CHECK(option_value(args, "--mtp") == "3");  // the last wins, as in sim
  CHECK(option_value({"--mtp=2", "--chunk", "64"}, "--mtp") == "2");
  CHECK(option_value(args, "--mem-fraction") == "0.8");
  CHECK(option_value(args, "--no-prefix-cache").empty());  // a flag: no value
  CHECK(option_value(args, "--chunk").empty());            // not given
}
