// The host KV tier's flags of `tokenline sim` and `run` (cli/kv_tier_options.cpp), run as separate processes:
// bad values and impossible tiers are input errors naming the flag (exit 2, no outputs), a tier shows in
// metrics.json and trace.json only when asked for, and on a workload with a reuse distance beyond HBM the
// tier turns recomputed prefixes into host hits.
#include "cli/kv_tier_options.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

// A conversation's first turn (20 blocks of 512 tokens), 12 unrelated prompts that evict it from a 400-page
// HBM pool, then its second turn: the first turn's 20 blocks and 4 new ones.
std::string write_conversation(const TestDir& dir) {
  const std::string path = dir.file("conversation.jsonl");
  std::ofstream out(path);
  auto blocks = [](int64_t first, int64_t n) {
    std::string ids;
    for (int64_t i = 0; i < n; ++i) ids += (i > 0 ? ", " : "") + std::to_string(first + i);
    return ids;
  };
  out << R"({"timestamp": 0, "input_length": 10240, "output_length": 8, "hash_ids": [)" << blocks(0, 20)
      << "]}\n";
  for (int64_t i = 0; i < 12; ++i) {
    out << R"({"timestamp": )" << 2000 * (i + 1)
        << R"(, "input_length": 10240, "output_length": 8, "hash_ids": [)" << blocks(1000 + 20 * i, 20)
        << "]}\n";
  }
  out << R"({"timestamp": 30000, "input_length": 12288, "output_length": 8, "hash_ids": [)" << blocks(0, 20)
      << ", " << blocks(900, 4) << "]}\n";
  return path;
}

std::string sim_args(const TestDir& dir, const std::string& out, const std::string& extra,
                     const std::string& where = "--cluster h200x8") {
  // --roofline: the seed's engine (MLA KV sharded over TP), whose page sizes the figures below count; the
  // default would be h200-sglang's engine, which replicates MLA KV on every TP rank.
  return "sim --workload '" + write_conversation(dir) + "' --model deepseek-v3 " + where +
         " --parallel tp8 --roofline --kv-pages 400 --out '" + dir.file(out) + "' " + extra;
}

}  // namespace

TEST_CASE("bad host-tier flags are input errors naming the flag, before any output", "[kv_tier_cli]") {
  TestDir dir("kv_tier_flags");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--kv-host-gb -1", "--kv-host-gb"},
      {"--kv-host-ratio nan", "--kv-host-ratio"},
      {"--kv-host --kv-write-policy write_around", "--kv-write-policy"},
      {"--kv-host --kv-load-overlap half", "--kv-load-overlap"},
      {"--kv-host --no-prefix-cache", "--kv-host"},
  };
  for (const auto& [flags, named] : cases) {
    INFO(flags);
    const auto r = run_tokenline(sim_args(dir, "o", flags), dir);
    INFO(r.stderr_text);
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find(named) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("o/metrics.json")));
  }
  // b300.json gives no host link: a tier there has nothing to price its transfers with.
  const auto r = run_tokenline(sim_args(dir, "o", "--kv-host-gb 10", "--hardware b300 --gpus 8"), dir);
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("--kv-host-gb: expected hardware whose JSON gives a host_link") !=
        std::string::npos);
}

TEST_CASE("the real engine takes the tier flags but not the simulator's load overlap", "[kv_tier_cli]") {
  TestDir dir("kv_tier_run_flags");
  const std::string run =
      "run --model glm-5.3-tiny --workload 'synthetic:n=2,input=fixed:64,output=fixed:2' ";
  for (const auto& [flags, named] : std::vector<std::pair<std::string, std::string>>{
           {"--kv-host --no-prefix-cache", "--kv-host"},
           {"--kv-host-ratio -2", "--kv-host-ratio"},
           {"--kv-host --kv-write-policy later", "--kv-write-policy"},
           {"--kv-host --kv-load-overlap layer", "--kv-load-overlap"}}) {
    INFO(flags);
    const auto r = run_tokenline(run + flags + " --out '" + dir.file("o") + "'", dir);
    INFO(r.stderr_text);
    CHECK(r.exit_code != 0);
    CHECK(r.stderr_text.find(named) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("o/metrics.json")));
  }
  const auto ok = run_tokenline(run + "--kv-host --out '" + dir.file("ok") + "'", dir);
  INFO(ok.stderr_text);
  REQUIRE(ok.exit_code == 0);
  const auto metrics = read_json(dir.file("ok/metrics.json"));
  CHECK(metrics.contains("kv_tiers"));
  CHECK(metrics["configuration"]["host_tier"]["pages_per_rank"] == 512);  // 2 x the default 256 pages
}

TEST_CASE("a host tier turns evicted prefixes into host hits and reports its transfers", "[kv_tier_cli]") {
  TestDir dir("kv_tier_run");
  REQUIRE(run_tokenline(sim_args(dir, "hbm", ""), dir).exit_code == 0);
  const auto r = run_tokenline(sim_args(dir, "host", "--kv-host-gb 100 --trace-detail step"), dir);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  const auto hbm = read_json(dir.file("hbm/metrics.json"));
  const auto host = read_json(dir.file("host/metrics.json"));
  CHECK_FALSE(hbm.contains("kv_tiers"));  // no tier: outputs as before
  REQUIRE(host.contains("kv_tiers"));
  const auto& t = host["kv_tiers"];
  CHECK(hbm["prefix_cache"]["hit_tokens"].get<int64_t>() == 0);  // HBM alone lost the first turn
  CHECK(t["host_hit_tokens"].get<int64_t>() == 20 * 512);        // the host tier kept all of it
  CHECK(t["hbm_hit_tokens"].get<int64_t>() == 0);
  CHECK(t["steps_with_transfers"].get<int64_t>() == 1);
  CHECK(t["bytes_host_to_hbm"].get<int64_t>() > 0);
  CHECK(t["bytes_hbm_to_host"].get<int64_t>() >= t["bytes_host_to_hbm"].get<int64_t>());
  CHECK(t["load_s"].get<double>() > 0);
  CHECK(host["prefix_cache"]["hit_rate"].get<double>() > hbm["prefix_cache"]["hit_rate"].get<double>());
  CHECK(host["latency_ms"]["ttft"]["mean"].get<double>() < hbm["latency_ms"]["ttft"]["mean"].get<double>());
  CHECK(host["configuration"]["instances"][0]["host_tier"]["write_policy"] == "write_through");
  const std::string trace = testing::read_all(dir.file("host/trace.json"));
  CHECK(trace.find("kv_load_host") != std::string::npos);
  CHECK(trace.find("host link (KV tier)") != std::string::npos);
}

TEST_CASE("a host tier too small for the conversation shows its write-back stalls and no hits",
          "[kv_tier_cli]") {
  TestDir dir("kv_tier_small");
  REQUIRE(run_tokenline(sim_args(dir, "hbm", ""), dir).exit_code == 0);
  // 0.015 GB holds 26 pages of 563 kB (64 tokens of DeepSeek-V3 MLA KV sharded over TP8): less than the
  // 20-page first turn plus what the other prompts' evictions write after it.
  const auto r =
      run_tokenline(sim_args(dir, "small", "--kv-host-gb 0.015 --kv-write-policy write_back"), dir);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  const auto hbm = read_json(dir.file("hbm/metrics.json"));
  const auto small = read_json(dir.file("small/metrics.json"));
  const auto& t = small["kv_tiers"];
  CHECK(t["host_capacity_pages"].get<int64_t>() == 26);
  CHECK(t["host_hit_tokens"].get<int64_t>() == 0);
  CHECK(t["host_evicted_pages"].get<int64_t>() > 0);
  CHECK(t["store_s"].get<double>() > 0);  // every eviction's write blocked a step
  CHECK(t["stall_s"].get<double>() >= t["store_s"].get<double>());
  CHECK(small["latency_ms"]["e2e"]["mean"].get<double>() > hbm["latency_ms"]["e2e"]["mean"].get<double>());
}

}  // namespace tokenline
