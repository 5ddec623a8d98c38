// The summary a run prints on the terminal (cli/run_summary.h): its figures come from metrics.json, the
// overload warning only from a saturated run; and the commands that print it.
#include "cli/run_summary.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/tokenline_process.h"

namespace tokenline::cli {
namespace {

using testing::run_tokenline_both;
using testing::TestDir;

nlohmann::json latency(double mean, double p50, double p90, double p99) {
  return {{"count", 10}, {"mean", mean}, {"p50", p50}, {"p90", p90}, {"p99", p99}, {"max", p99}};
}

nlohmann::json metrics_document(bool saturated) {
  return {
      {"requests",
       {{"arrived", 100},
        {"completed", 98},
        {"rejected", 2},
        {"in_flight_at_end", 0},
        {"preemptions", 7},
        {"retractions", 3}}},
      {"latency_ms",
       {{"ttft", latency(120, 100, 300, 900)},
        {"tpot", latency(20, 19, 25, 40)},
        {"itl", latency(20, 18, 24, 45)},
        {"e2e", latency(3000, 2900, 4000, 6000)}}},
      {"throughput",
       {{"span_s", 50.0},
        {"input_tokens_per_s", 4000.0},
        {"output_tokens_per_s", 800.0},
        {"requests_per_s", 1.96}}},
      {"load",
       {{"offered_requests_per_s", 4.0},
        {"sustained_requests_per_s", 1.96},
        {"ttft_mean_ms_by_arrival_quarter", {100, 2000, 5000, 9000}},
        {"saturated", saturated}}},
      {"prefix_cache", {{"hit_rate", 0.25}}},
      {"kv_pages", {{"capacity", 1000}, {"peak", 500}}},
      {"run",
       {{"model", "m"}, {"hardware", "h200"}, {"parallelism", "tp8"}, {"instances", 1}, {"workload", "w"}}}};
}

TEST_CASE("the summary carries throughput per GPU, every percentile and what priced the steps", "[summary]") {
  SummaryContext c;
  c.command = "sim";
  c.gpus = 8;
  c.time_source = "the roofline (no --profile)";
  c.defaults = {"hardware h200 (no --hardware)"};
  const nlohmann::ordered_json s = summary_json(metrics_document(false), c);
  CHECK(s["throughput"]["output_tokens_per_s_per_gpu"].get<double>() == Approx(100.0));
  CHECK(s["throughput"]["requests_per_s_per_gpu"].get<double>() == Approx(1.96 / 8));
  CHECK(s["latency_ms"]["ttft"]["p99"].get<double>() == Approx(900));
  CHECK(s["kv_pages"]["peak_fraction"].get<double>() == Approx(0.5));
  CHECK(s["goodput"].is_null());
  const std::string table = summary_table(s);
  CHECK(table.find("TTFT") != std::string::npos);
  CHECK(table.find("p99") != std::string::npos);
  CHECK(table.find("900") != std::string::npos);
  CHECK(table.find("(100 per GPU)") != std::string::npos);
  CHECK(table.find("7 preemptions, 3 retractions") != std::string::npos);
  CHECK(table.find("step times    the roofline (no --profile)") != std::string::npos);
  CHECK(table.find("defaults      hardware h200 (no --hardware)") != std::string::npos);
  CHECK(table.find("no --slo given") != std::string::npos);
  CHECK(table.find("load          offered 4.00 req/s, sustained 1.96 req/s") != std::string::npos);
  CHECK(overload_warning(s).empty());
  CHECK(table.find("accuracy") == std::string::npos);  // no note, no line
}

TEST_CASE("how far to trust a run is a line under what priced its steps, in the table and the JSON",
          "[summary]") {
  SummaryContext c;
  c.command = "sim";
  c.time_source = "profile p: 90.0% of step time measured";
  c.accuracy = {"p vs 10 published runs", "this model: m, 10 runs in sample"};
  const nlohmann::ordered_json s = summary_json(metrics_document(false), c);
  REQUIRE(s["accuracy"].size() == 2);
  CHECK(s["accuracy"][0].get<std::string>() == "p vs 10 published runs");
  CHECK(s["accuracy"][1].get<std::string>() == "this model: m, 10 runs in sample");
  const std::string table = summary_table(s);
  const size_t step = table.find("  step times    profile p");
  const size_t first = table.find("  accuracy      p vs 10 published runs\n");
  const size_t second = table.find("                this model: m, 10 runs in sample\n");
  REQUIRE(step != std::string::npos);
  REQUIRE(first != std::string::npos);
  REQUIRE(second != std::string::npos);
  CHECK(step < first);
  CHECK(first < second);
}

TEST_CASE("a host tier's hits and stalls and an autoscaled fleet get a line each, only when present",
          "[summary]") {
  SummaryContext c;
  c.command = "sim";
  c.gpus = 8;
  const std::string plain = summary_table(summary_json(metrics_document(false), c));
  CHECK(plain.find("KV host tier") == std::string::npos);
  CHECK(plain.find("instances     ") == std::string::npos);
  nlohmann::json m = metrics_document(false);
  m["kv_tiers"] = {{"host_hit_rate", 0.026},
                   {"hit_rate", 0.071},
                   {"bytes_host_to_hbm", 5.2e9},
                   {"bytes_hbm_to_host", 183.4e9},
                   {"stall_s", 0.0014}};
  m["autoscaling"] = {{"instances_peak", 3}, {"instances_mean", 1.42},
                      {"scale_ups", 2},      {"scale_downs", 1},
                      {"cold_starts", 2},    {"drains", 1},
                      {"gpu_hours", 0.0233}, {"decisions", nlohmann::json::array()}};
  const nlohmann::ordered_json s = summary_json(m, c);
  CHECK_FALSE(s["autoscaling"].contains("decisions"));  // the totals, not the run's history
  const std::string table = summary_table(s);
  CHECK(table.find("KV host tier  hit 2.6% of looked-up tokens (7.1% with HBM); 5.2 GB loaded back, 183.4 GB "
                   "written; stalls 0.001 s") != std::string::npos);
  CHECK(table.find(
            "instances     peak 3, mean 1.42; 2 scale-ups, 1 scale-downs, 2 cold starts; 0.023 GPU-hours") !=
        std::string::npos);
}

TEST_CASE("an autoscaled run's per-GPU figures count the GPU-hours provisioned, not every slot",
          "[summary][autoscale]") {
  SummaryContext c;
  c.command = "sim";
  c.gpus = 8;  // --max-instances 8 of one GPU each
  nlohmann::json m = metrics_document(false);
  m["run"]["simulated_s"] = 3600.0;
  m["autoscaling"] = {{"instances_peak", 4}, {"instances_mean", 2.0}, {"gpu_hours", 2.0}};
  const nlohmann::ordered_json s = summary_json(m, c);
  CHECK(s["gpus"] == 8);
  CHECK(s["gpus_mean"].get<double>() == Approx(2.0));
  CHECK(s["throughput"]["output_tokens_per_s_per_gpu"].get<double>() == Approx(400.0));  // 800 / 2
  CHECK(s["throughput"]["requests_per_s_per_gpu"].get<double>() == Approx(1.96 / 2));
  const std::string table = summary_table(s);
  CHECK(table.find("on 2.00 (mean; at most 8) x h200") != std::string::npos);
  CHECK(table.find("(400 per GPU)") != std::string::npos);
  // PD pools: a line with each pool's peak and mean.
  m["autoscaling"]["prefill"] = {{"instances_peak", 2}, {"instances_mean", 1.5}};
  m["autoscaling"]["decode"] = {{"instances_peak", 3}, {"instances_mean", 0.5}};
  CHECK(summary_table(summary_json(m, c))
            .find("instances     prefill peak 2, mean 1.50; decode peak 3, mean 0.50") != std::string::npos);
}

TEST_CASE("a saturated run's summary warns with the offered and the sustained rate", "[summary]") {
  SummaryContext c;
  c.command = "sim";
  const nlohmann::ordered_json s = summary_json(metrics_document(true), c);
  const std::string warning = overload_warning(s);
  CHECK(warning.find("offered 4.00 req/s") != std::string::npos);
  CHECK(warning.find("sustained 1.96 req/s") != std::string::npos);
}

TEST_CASE(
    "An MoE model's default layout is the engine's: DP + EP under SGLang, TP under vLLM and TensorRT-LLM",
    "[summary][cli]") {
  // vLLM splits experts only with --enable-expert-parallel (vllm/config/parallel.py); TensorRT-LLM sets
  // moe_tp_size = tp_size when no MoE size is given (tensorrt_llm/mapping.py); SGLang: its DP-attention + EP.
  TestDir dir("summary_moe_layout");
  const std::string common = "sim --model gpt-oss-120b --hardware h100 --gpus 2 --max-requests 20 ";
  const struct {
    const char* flags;
    const char* layout;
  } cases[] = {{"--engine vllm", "layout tp2 (MoE model on 2 GPUs per instance: vLLM's default"},
               {"--engine trtllm", "layout tp2 (MoE model on 2 GPUs per instance: TensorRT-LLM's default"},
               {"--profile h100-vllm", "layout tp2 (MoE model on 2 GPUs per instance: vLLM's default"},
               {"--engine sglang", "layout dp2-ep2 (MoE model on 2 GPUs per instance: DP attention"},
               {"", "layout dp2-ep2"},
               {"--engine vllm --parallel dp2-ep2", nullptr}};
  int i = 0;
  for (const auto& c : cases) {
    const auto run =
        run_tokenline_both(common + c.flags + " --out '" + dir.file("o" + std::to_string(i++)) + "'", dir);
    INFO(c.flags);
    REQUIRE(run.exit_code == 0);
    if (c.layout != nullptr)
      CHECK(run.stdout_text.find(c.layout) != std::string::npos);
    else
      CHECK(run.stdout_text.find("layout ") == std::string::npos);  // given, not defaulted
  }
}

TEST_CASE("sim prints the summary table on stdout and --json prints it as JSON", "[summary][cli]") {
  TestDir dir("summary_cli");
  const std::string workload =
      testing::source_file("tests/cli/fixtures/mooncake_conversation_3001_3300.jsonl");
  const std::string common = "sim --workload '" + workload + "' --max-requests 40 --slo ttft=2s,tpot=100ms ";
  const auto table = run_tokenline_both(common + "--out '" + dir.file("a") + "'", dir);
  REQUIRE(table.exit_code == 0);
  CHECK(table.stdout_text.find("TTFT") != std::string::npos);
  CHECK(table.stdout_text.find("goodput") != std::string::npos);
  CHECK(table.stdout_text.find("per GPU") != std::string::npos);
  CHECK(table.stdout_text.find("layout dp8-ep8") != std::string::npos);  // the default, said
  // glm-5.3 on h200 priced by h200-sglang: the shipped accuracy table's line for that profile
  CHECK(table.stdout_text.find("  accuracy      h200-sglang vs ") != std::string::npos);
  const auto json = run_tokenline_both(common + "--json --out '" + dir.file("b") + "'", dir);
  REQUIRE(json.exit_code == 0);
  const nlohmann::json s = nlohmann::json::parse(json.stdout_text);
  CHECK(s["gpus"] == 8);
  CHECK(s["requests"]["completed"] == 40);
  const nlohmann::json m = testing::read_json(dir.file("b/metrics.json"));
  CHECK(s["latency_ms"]["ttft"]["p90"] == m["latency_ms"]["ttft"]["p90"]);
  CHECK(s["goodput"]["requests_per_s"] == m["goodput"]["requests_per_s"]);
  REQUIRE(s["accuracy"].is_array());
  CHECK_FALSE(s["accuracy"].empty());
}

// The README's case (issue 45): Llama-3.1-70B on 8 H200 with nothing but a rate, on the default chat
// workload (the Azure 2023 conversation head: ~1k-token prompts, ~250-token answers) priced by h200-sglang:
// tp8 keeps up with 5 req/s and not with 20, where the running batch grows through the run (E2E rises, TTFT
// stays near a second because SGLang prefills first). On the Mooncake conversation head (~14k-token prompts)
// 5 req/s is past what eight H200s can prefill (9.7 PFLOP/s of BF16 against a 7.9 PFLOP/s dense peak), so it
// warns there too: the workload, not the warning rule, decides.
TEST_CASE("an overloaded deployment says so, a healthy one does not", "[summary][cli]") {
  TestDir dir("summary_overload");
  const std::string run = "sim --model llama-3.1-70b --hardware h200 --gpus 8 ";
  const auto over = run_tokenline_both(run + "--rate 20 --out '" + dir.file("o20") + "'", dir);
  REQUIRE(over.exit_code == 0);
  CHECK(over.stdout_text.find("p99") != std::string::npos);
  CHECK(over.stdout_text.find("E2E") != std::string::npos);
  CHECK(over.stderr_text.find("warning: overloaded: offered 20.0 req/s") != std::string::npos);
  const auto fine = run_tokenline_both(run + "--rate 5 --out '" + dir.file("o5") + "'", dir);
  REQUIRE(fine.exit_code == 0);
  CHECK(fine.stdout_text.find("p99") != std::string::npos);
  CHECK(fine.stderr_text.find("overloaded") == std::string::npos);
  const auto long_prompts =
      run_tokenline_both(run + "--workload default --rate 5 --out '" + dir.file("m5") + "'", dir);
  REQUIRE(long_prompts.exit_code == 0);
  CHECK(long_prompts.stderr_text.find("warning: overloaded: offered 5.00 req/s") != std::string::npos);
}

}  // namespace
}  // namespace tokenline::cli
