// Bad input to `tokenline sim`: reported with file:line or the option, exit code 2, nothing written.
#include "cli/sim_job.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "common/input_error.h"
#include "tests/cli/tokenline_process.h"
#include "traces/output_file.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

// `job` on two 64-token requests into a fresh folder `dir_name`: whether the layout and chunk it names run.
int run_two_small_requests(SimJob job, const std::string& dir_name) {
  job.workload = "synthetic:n=2,input=fixed:64,output=fixed:2";
  TestDir dir(dir_name);
  job.out = dir.file("o");
  return run_sim_job(job);
}

// Five Mooncake lines, the third malformed (input_length is a string).
std::string write_with_bad_line(const TestDir& dir) {
  const std::string path = dir.file("bad.jsonl");
  std::ofstream out(path);
  out << R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]})"
      << "\n"
      << R"({"timestamp": 10, "input_length": 700, "output_length": 5, "hash_ids": [0, 2]})"
      << "\n"
      << R"({"timestamp": 20, "input_length": "many", "output_length": 5, "hash_ids": [0, 3]})"
      << "\n"
      << R"({"timestamp": 30, "input_length": 800, "output_length": 5, "hash_ids": [0, 4]})"
      << "\n"
      << R"({"timestamp": 40, "input_length": 900, "output_length": 5, "hash_ids": [0, 5]})"
      << "\n";
  return path;
}

TEST_CASE("a malformed line stops the run with file:line and exit code 2 before simulating", "[sim_job]") {
  TestDir dir("sim_bad_line");
  const std::string workload = write_with_bad_line(dir);
  const auto r = run_tokenline("sim --workload '" + workload + "' --out '" + dir.file("o") + "'", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find(workload + ":3") != std::string::npos);
  CHECK(r.stderr_text.find("expected") != std::string::npos);
  for (const char* f : {"metrics.json", "requests.csv", "trace.json"}) {
    CHECK_FALSE(std::filesystem::exists(dir.file(std::string("o/") + f)));
  }
}

TEST_CASE("skip-bad-lines skips and counts malformed lines", "[sim_job]") {
  TestDir dir("sim_skip_lines");
  const std::string workload = write_with_bad_line(dir);
  const auto r =
      run_tokenline("sim --workload '" + workload + "' --skip-bad-lines --out '" + dir.file("o") + "'", dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["run"]["skipped_lines"] == 1);
  CHECK(m["requests"]["arrived"] == 4);
  CHECK(m["requests"]["completed"] == 4);
  CHECK(r.stderr_text.find("skipped 1") != std::string::npos);
}

TEST_CASE("an output directory that cannot be written fails before the simulation", "[sim_job]") {
  TestDir dir("sim_bad_out");
  const std::string blocker = dir.file("file");
  std::ofstream(blocker) << "x";
  const std::string workload = testing::source_file("workloads/data/mooncake_conversation_head.jsonl");
  const auto r = run_tokenline("sim --workload '" + workload + "' --out '" + blocker + "/sub'", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("--out") != std::string::npos);
  CHECK(r.stderr_text.find("tokenline sim:") == std::string::npos);  // no summary: nothing was simulated
}

TEST_CASE("bad option values are input errors naming the option", "[sim_job]") {
  SimJob job;
  job.out = "unused";
  job.router = "random";
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--router"));
  job.router = "round-robin";
  job.slo = "ttft=fast";
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--slo ttft"));
  job.slo = "";
  job.instances = 0;
  CHECK_THROWS_AS(run_sim_job(job), InputError);
  job.instances = 2;
  job.parallel = "dp8-ep8";
  job.cluster = "h200x8";  // 2 x dp8-ep8 needs 16 GPUs
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("h200x8"));
  job.instances = 1;
  job.parallel = "";
  job.cluster = "";
  job.prefill_max_running = 4;  // a prefill pool's own flag without --pd
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--prefill-max-running") && Catch::Contains("--pd"));
  job.pd = "1P1D";
  job.prefill_max_running = -1;
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--prefill-max-running"));
  job.prefill_max_running = 0;
  job.prefill_mem_fraction = 1.5;
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--prefill-mem-fraction"));
  job.pd = "";  // a replay has no prefill instances either: refused before the trace is read
  job.prefill_mem_fraction = 0.7;
  job.backend = "replay:missing-trace.json";
  CHECK_THROWS_WITH(run_replay_job(job),
                    Catch::Contains("--prefill-mem-fraction") && Catch::Contains("replay"));
}

// A newcomer's first try that cannot fit: Kimi-K2.5 (INT4 experts, ~595 GB) on one node of H100s under
// SGLang's default layout and memory rule. The refusal names the layout it chose and what would make room.
TEST_CASE("a default layout whose GPUs cannot hold the weights is refused with what would make room",
          "[sim_job]") {
  SimJob job;
  job.out = "unused";
  job.model = "kimi-k2.5";
  job.hardware = "h100";
  CHECK_THROWS_WITH(
      run_sim_job(job),
      Catch::Contains("--parallel dp8-ep8: expected a layout whose GPUs hold the weights") &&
          Catch::Contains("GB of weights per GPU with ") &&
          Catch::Contains("(more GPUs, another --parallel, a larger --mem-fraction or a smaller "
                          "--weights-format would make room)"));
  // two nodes under SGLang's default dp16-ep16 still replicate attention on every GPU (refused); TP over
  // them shards it too and fits
  job.gpus = 16;
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--parallel dp16-ep16"));
  job.parallel = "tp16-ep16";
  CHECK(run_two_small_requests(job, "sim_default_layout_room") == 0);
}

// The seed's memory rule keeps an activation reserve that grows with the chunk: a layout whose weights fit
// is still refused when that reserve leaves no KV, and the message says how much the chunk took.
TEST_CASE("a layout the chunk's activations leave no KV is refused naming weights and activations",
          "[sim_job]") {
  SimJob job;
  job.out = "unused";
  job.model = "deepseek-v3";
  job.parallel = "dp8-ep8";
  job.mem_fraction = 0.82;
  job.chunk_tokens = 262144;
  job.roofline = true;  // the seed's engine and memory rule (h200-sglang keeps its reserve outside)
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--parallel dp8-ep8") &&
                                          Catch::Contains("GB of weights per GPU and 30.1 GB of activations "
                                                          "for 262144-token chunks with 115.6 GB usable") &&
                                          Catch::Contains("a smaller --chunk"));
  job.chunk_tokens = 8192;  // the same layout with a small chunk holds KV
  CHECK(run_two_small_requests(job, "sim_activation_reserve") == 0);
}

TEST_CASE("window options bound what is simulated", "[sim_job]") {
  TestDir dir("sim_window");
  constexpr int kRequests = 40;
  constexpr double kTimeScale = 0.5;
  const auto r = run_tokenline("sim --workload default --max-requests " + std::to_string(kRequests) +
                                   " --time-scale 0.5 --out '" + dir.file("o") + "'",
                               dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["requests"]["arrived"] == kRequests);
  CHECK(m["requests"]["completed"] == kRequests);
  // The last kept arrival is the embedded trace's 40th timestamp (ms), scaled.
  std::ifstream head(testing::source_file("workloads/data/mooncake_conversation_head.jsonl"));
  std::string line;
  double expected_s = 0;
  for (int i = 0; i < kRequests && std::getline(head, line); ++i) {
    expected_s = nlohmann::json::parse(line)["timestamp"].get<double>() * 1e-3 * kTimeScale;
  }
  REQUIRE(expected_s > 0);
  double last_arrival_s = 0;
  for (const auto& row : testing::read_csv_rows(dir.file("o/requests.csv"))) {
    last_arrival_s = std::max(last_arrival_s, std::stod(row[1]));
  }
  CHECK(last_arrival_s == Approx(expected_s));
}

TEST_CASE("a warm-up phase drains before the measured requests go, all clients at once", "[sim_job]") {
  TestDir dir("sim_warmup");
  // Co-located (the default deployment) and disaggregated: one feeder serves both drivers. The roofline:
  // under h200-sglang's first_token_latency_s the PD driver sends the measured requests when the engine
  // finishes the warm-up, before requests.csv's client-side finish of its last request (co-located waits for
  // the latter).
  const std::string pd =
      GENERATE(std::string(), std::string("--model deepseek-v3 --parallel tp8,tp8 --pd 1P1D "));
  CAPTURE(pd);
  const std::string out = dir.file(pd.empty() ? "o" : "o_pd");
  const auto r = run_tokenline("sim " + pd +
                                   "--workload synthetic:n=12,input=fixed:256,output=fixed:16 --concurrency "
                                   "4 --warmup 8 --roofline --out '" +
                                   out + "'",
                               dir);
  REQUIRE(r.exit_code == 0);
  const auto metrics = read_json(out + "/metrics.json");
  CHECK(metrics["run"]["warmup_requests"] == 8);
  double warmup_left_s = 0;  // when the last warm-up request finished
  std::vector<double> measured_sent_s;
  double ttft_sum_s = 0;  // over the measured requests
  for (const auto& row : testing::read_csv_rows(out + "/requests.csv")) {
    const int id = std::stoi(row[0]);
    if (id < 8) {
      warmup_left_s = std::max(warmup_left_s, std::stod(row[3]));
    } else {
      measured_sent_s.push_back(std::stod(row[1]));
      ttft_sum_s += std::stod(row[2]) - std::stod(row[1]);
    }
  }
  REQUIRE(measured_sent_s.size() == 4);
  REQUIRE(warmup_left_s > 0);
  for (const double s : measured_sent_s) CHECK(s == Approx(warmup_left_s));
  // metrics.json's latency describes the measured requests only (requests.csv keeps every row).
  CHECK(metrics["requests"]["warmup"] == 8);
  CHECK(metrics["requests"]["completed"] == 12);
  CHECK(metrics["latency_ms"]["ttft"]["mean"].get<double>() == Approx(ttft_sum_s / 4 * 1e3).epsilon(1e-3));

  const auto open = run_tokenline("sim --warmup 3 --out '" + dir.file("p") + "'", dir);
  CHECK(open.exit_code == 2);
  CHECK(open.stderr_text.find("--warmup") != std::string::npos);
}

TEST_CASE("a first-token latency moves what the client sees and not the engine's steps", "[sim_job]") {
  TestDir dir("sim_first_token_latency");
  const std::string pd =
      GENERATE(std::string(), std::string("--model deepseek-v3 --parallel tp8,tp8 --pd 1P1D "));
  CAPTURE(pd);
  const auto run = [&](const std::string& name, const std::string& output, double latency_s) {
    const std::string out = dir.file(name + (pd.empty() ? "" : "_pd"));
    const auto r =
        run_tokenline("sim " + pd + "--workload synthetic:n=12,input=fixed:256,output=" + output +
                          " --concurrency 4 --profile h200-sglang --profile-set first_token_latency_s=" +
                          std::to_string(latency_s) + " --out '" + out + "'",
                      dir);
    REQUIRE(r.exit_code == 0);
    return out;
  };
  // 64 tokens decode for longer than the latency, so no request's last token comes before its first.
  const std::string engine = run("engine", "fixed:64", 0), client = run("client", "fixed:64", 0.05);
  const auto engine_rows = testing::read_csv_rows(engine + "/requests.csv");
  const auto client_rows = testing::read_csv_rows(client + "/requests.csv");
  REQUIRE(engine_rows.size() == 12);
  REQUIRE(client_rows.size() == 12);
  double shift_sum_s = 0;
  for (size_t i = 0; i < engine_rows.size(); ++i) {
    CHECK(client_rows[i][1] == engine_rows[i][1]);  // the same arrivals: clients send at the same times
    CHECK(client_rows[i][3] == engine_rows[i][3]);  // and the same finishes: no step moved
    CHECK(std::stod(client_rows[i][2]) == Approx(std::stod(engine_rows[i][2]) + 0.05).margin(1e-6));
    shift_sum_s += std::stod(client_rows[i][2]) - std::stod(engine_rows[i][2]);
  }
  const double engine_ttft_ms =
      read_json(engine + "/metrics.json")["latency_ms"]["ttft"]["mean"].get<double>();
  const double client_ttft_ms =
      read_json(client + "/metrics.json")["latency_ms"]["ttft"]["mean"].get<double>();
  CHECK(client_ttft_ms == Approx(engine_ttft_ms + shift_sum_s / 12 * 1e3).epsilon(1e-3));
  // A one-token request's first token is its last: the client gets both at the later time.
  for (const auto& row : testing::read_csv_rows(run("one", "fixed:1", 0.25) + "/requests.csv"))
    CHECK(row[2] == row[3]);
}

TEST_CASE("an unknown option value fails in the binary with exit code 2", "[sim_job]") {
  TestDir dir("sim_bad_option");
  const auto r = run_tokenline("sim --trace-detail everything --out '" + dir.file("o") + "'", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("--trace-detail") != std::string::npos);
}

TEST_CASE("a flag typo with an existing --out leaves that directory byte-identical", "[sim_job]") {
  TestDir dir("sim_typo_keeps_out");
  const std::string out = dir.file("v10");
  REQUIRE(run_tokenline("sim --max-requests 20 --out '" + out + "'", dir).exit_code == 0);
  const auto before = testing::dir_snapshot(out);
  REQUIRE(before.count("metrics.json") == 1);
  for (const std::string& bad : {std::string("--parallel TP4"), std::string("--rate -3"),
                                 std::string("--hardware h100 --cluster h200x8"), std::string("--gpus 3"),
                                 std::string("--workload '") + write_with_bad_line(dir) + "'"}) {
    CAPTURE(bad);
    const auto r = run_tokenline("sim " + bad + " --max-requests 20 --out '" + out + "'", dir);
    CHECK(r.exit_code == 2);
    CHECK(testing::dir_snapshot(out) == before);
  }
}

TEST_CASE("a run into a directory another run is writing is refused", "[sim_job]") {
  TestDir dir("sim_locked_out");
  const std::string out = dir.file("o");
  RunOutputs held(out);  // this process holds the lock, as a running sim would
  const auto r = run_tokenline("sim --max-requests 5 --out '" + out + "'", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("another run holds its lock") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out + "/metrics.json"));
}

TEST_CASE("a dense model alone runs tensor parallel over its GPUs, an MoE one with DP attention + EP",
          "[sim_job]") {
  TestDir dir("sim_default_layout");
  const auto dense =
      run_tokenline("sim --model llama-3.1-8b --max-requests 10 --out '" + dir.file("d") + "'", dir);
  REQUIRE(dense.exit_code == 0);
  CHECK(read_json(dir.file("d/metrics.json"))["run"]["parallelism"] == "tp8");
  const auto two = run_tokenline(
      "sim --model llama-3.1-8b --gpus 2 --max-requests 10 --out '" + dir.file("d2") + "'", dir);
  REQUIRE(two.exit_code == 0);
  CHECK(read_json(dir.file("d2/metrics.json"))["run"]["parallelism"] == "tp2");
  const auto moe = run_tokenline("sim --max-requests 10 --out '" + dir.file("m") + "'", dir);
  REQUIRE(moe.exit_code == 0);
  CHECK(read_json(dir.file("m/metrics.json"))["run"]["parallelism"] == "dp8-ep8");
  const auto wrong = run_tokenline("sim --gpus 4 --parallel tp8 --out '" + dir.file("w") + "'", dir);
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.stderr_text.find("--gpus") != std::string::npos);
}

TEST_CASE("sim: --hardware and --cluster together are refused", "[sim_job]") {
  SimJob job;
  job.out = "unused";
  job.hardware = "h100";
  job.cluster = "h200x8";
  CHECK_THROWS_WITH(run_sim_job(job), Catch::Contains("--hardware h100") && Catch::Contains("--cluster"));
}

TEST_CASE("sim --rate rescales the trace's arrivals to the rate asked and prints the trace's own",
          "[sim_job]") {
  TestDir dir("sim_rate");
  const std::string workload =
      testing::source_file("tests/cli/fixtures/mooncake_conversation_3001_3300.jsonl");
  const auto r = testing::run_tokenline_both(
      "sim --workload '" + workload + "' --max-requests 60 --rate 3 --out '" + dir.file("o") + "'", dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["load"]["offered_requests_per_s"].get<double>() == Approx(3.0).epsilon(1e-6));
  CHECK(r.stdout_text.find("the workload's own rate") != std::string::npos);
  const auto both = run_tokenline("sim --rate 3 --time-scale 2 --out '" + dir.file("b") + "'", dir);
  CHECK(both.exit_code == 2);
  CHECK(both.stderr_text.find("--rate") != std::string::npos);
}

TEST_CASE("sim --rate with --duration offers the rate asked over the requests the duration keeps",
          "[sim_job]") {
  // The embedded chat trace opens slower than its average: rescaled by its whole average, its first 20 s
  // offered 0.46 req/s for --rate 2.
  TestDir dir("sim_rate_duration");
  const auto r =
      run_tokenline("sim --model llama-3.1-8b --hardware h200 --gpus 1 --rate 2 --duration 20 --out '" +
                        dir.file("o") + "'",
                    dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  CHECK(m["load"]["offered_requests_per_s"].get<double>() == Approx(2.0).epsilon(0.02));
  CHECK(m["requests"]["arrived"].get<int64_t>() == 40);
}

TEST_CASE("sim --isl / --osl make a synthetic workload at --rate with lengths inside the range ratio",
          "[sim_job]") {
  TestDir dir("sim_isl_osl");
  const auto r = run_tokenline(
      "sim --model llama-3.1-8b --isl 512 --osl 64 --range-ratio 0.5 --rate 4 "
      "--max-requests 50 --out '" +
          dir.file("o") + "'",
      dir);
  REQUIRE(r.exit_code == 0);
  const auto rows = testing::read_csv_rows(dir.file("o/requests.csv"));
  REQUIRE(rows.size() == 50);
  bool spread = false;
  for (const auto& row : rows) {
    const int64_t input = std::stoll(row[4]);
    CHECK(input >= 256);
    CHECK(input <= 768);
    spread = spread || input != 512;
  }
  CHECK(spread);
  const auto no_rate = run_tokenline("sim --isl 512 --osl 64 --out '" + dir.file("n") + "'", dir);
  CHECK(no_rate.exit_code == 2);
  CHECK(no_rate.stderr_text.find("--rate") != std::string::npos);
}

TEST_CASE("without --workload sim runs the Azure conversation head: the CSV's requests, arrivals and all",
          "[sim_job]") {
  // workloads/data/azure_conv_head1000.jsonl is docs/data/azure_conv_head1000.csv converted by
  // scripts/chat-workload: the two give the same simulation, request for request.
  TestDir dir("sim_chat_workload");
  const std::string csv = testing::source_file("docs/data/azure_conv_head1000.csv");
  const std::string flags = "sim --model llama-3.1-8b --max-requests 120 --rate 8 --roofline ";
  REQUIRE(run_tokenline(flags + "--out '" + dir.file("default") + "'", dir).exit_code == 0);
  REQUIRE(run_tokenline(flags + "--workload '" + csv + "' --out '" + dir.file("csv") + "'", dir).exit_code ==
          0);
  const std::string rows = testing::read_all(dir.file("default/requests.csv"));
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 121);
  CHECK(rows == testing::read_all(dir.file("csv/requests.csv")));
  const auto unknown =
      run_tokenline("sim --workload embedded:nothing.jsonl --out '" + dir.file("u") + "'", dir);
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.stderr_text.find("embedded:") != std::string::npos);
}

TEST_CASE("metrics.json's configuration block reproduces the run byte for byte", "[sim_job]") {
  TestDir dir("sim_configuration");
  const std::string workload =
      testing::source_file("tests/cli/fixtures/mooncake_conversation_3001_3300.jsonl");
  const auto first =
      run_tokenline("sim --model llama-3.1-8b --workload '" + workload +
                        "' --max-requests 30 --rate 2 --slo ttft=2s --out '" + dir.file("a") + "'",
                    dir);
  REQUIRE(first.exit_code == 0);
  const auto configuration = read_json(dir.file("a/metrics.json"))["configuration"];
  CHECK(configuration["layout"] == "tp8");
  CHECK(configuration["time_source"]["profile"] == "h200-sglang");  // chosen, and chosen again below
  CHECK(configuration["time_source"]["defaulted"] == true);
  CHECK(configuration["instances"][0]["max_running_requests_per_rank"].get<int64_t>() > 0);
  CHECK(configuration["tokenline_version"].get<std::string>().size() > 0);
  std::string again;
  for (const auto& a : configuration["arguments"]) again += "'" + a.get<std::string>() + "' ";
  REQUIRE(again.rfind("'sim' ", 0) == 0);
  REQUIRE(run_tokenline(again + "--out '" + dir.file("b") + "'", dir).exit_code == 0);
  for (const char* name : {"metrics.json", "requests.csv", "trace.json"}) {
    CAPTURE(name);
    CHECK(testing::read_all(dir.file(std::string("a/") + name)) ==
          testing::read_all(dir.file(std::string("b/") + name)));
  }
}

TEST_CASE("issue 44: Nemotron 3 Super and Gemma 4 presets simulate a small workload, roofline and profile",
          "[sim_job][families]") {
  TestDir dir("sim_new_families");
  const std::string workload = "synthetic:n=12,rate=4,input=uniform:256:1024,output=uniform:16:64";
  // Layouts as their model cards size them: Super BF16 on 8 GPUs, FP8 on 4; Gemma 4 on one H200.
  for (const char* model_layout :
       {"nemotron-3-super-120b-a12b --parallel tp8 --gpus 8",
        "nemotron-3-super-120b-a12b-fp8 --parallel tp4 --gpus 4", "gemma-4-31b --parallel tp1 --gpus 1",
        "gemma-4-26b-a4b --parallel tp1 --gpus 1"}) {
    for (const char* source : {"--roofline", "--engine vllm"}) {
      INFO(model_layout << " " << source);
      const std::string out = dir.file("o");
      const auto r = run_tokenline("sim --workload '" + workload + "' --model " + model_layout + " " +
                                       source + " --seed 3 --out '" + out + "'",
                                   dir);
      REQUIRE(r.exit_code == 0);
      const auto m = read_json(out + "/metrics.json");
      CHECK(m["requests"]["completed"] == 12);
      CHECK(m["latency_ms"]["tpot"]["p50"].get<double>() > 0);
    }
  }
}

}  // namespace
}  // namespace tokenline
