// `tokenline sim` of a Gated DeltaNet hybrid under an SGLang profile (issue 44): the state pool as SGLang
// sizes it (cost/engine_behavior.h sglang_state_slots). With the radix cache on (SGLang's default) a running
// request is counted for three slots, so at most a third of the slots run; with --no-prefix-cache (SGLang's
// --disable-radix-cache) one slot each, and --max-running then sizes the pool.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

constexpr int64_t kClients = 800;

// Qwen3.5-397B-A17B (BF16) on 8 x H200, 800 closed-loop clients of short requests, priced by h200-sglang.
nlohmann::json state_slots(const TestDir& dir, const char* out, const std::string& flags) {
  const std::string cmd =
      "sim --model qwen3.5-397b-a17b --hardware h200 --parallel tp8 --profile h200-sglang "
      "--concurrency " +
      std::to_string(kClients) + " --workload 'synthetic:n=1600,input=fixed:64,output=fixed:16,seed=1' " +
      flags + " --out '" + dir.file(out) + "'";
  const auto r = run_tokenline(cmd, dir);
  INFO(r.stderr_text);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json m = read_json(dir.file(out) + "/metrics.json");
  REQUIRE(m["requests"]["completed"] == 1600);
  return m["state_slots"];
}

}  // namespace

TEST_CASE("issue 44: SGLang's radix cache counts a running hybrid request for three state slots",
          "[sim_job][linear]") {
  TestDir dir("sim_hybrid_pool");
  const nlohmann::json radix = state_slots(dir, "radix", "");
  const nlohmann::json none = state_slots(dir, "none", "--no-prefix-cache");
  const int64_t slots = radix["capacity"].get<int64_t>();
  // The same ratio rule sizes both pools; only the count per running request differs.
  CHECK(none["capacity"].get<int64_t>() == slots);
  REQUIRE(slots / 3 < kClients);
  REQUIRE(slots >= kClients);
  CHECK(radix["peak"].get<int64_t>() <= slots / 3);
  CHECK(none["peak"].get<int64_t>() == kClients);
}

TEST_CASE("issue 44: without the radix cache SGLang's state pool holds --max-running slots",
          "[sim_job][linear]") {
  TestDir dir("sim_hybrid_pool_limit");
  const nlohmann::json limited = state_slots(dir, "limited", "--no-prefix-cache --max-running 128");
  CHECK(limited["capacity"] == 128);
  CHECK(limited["peak"] == 128);
  // With the radix cache on, the limit does not size the pool (the memory ratio does).
  const nlohmann::json radix = state_slots(dir, "radix", "--max-running 128");
  CHECK(radix["capacity"].get<int64_t>() > 3 * 128);
  CHECK(radix["peak"] == 128);
}

}  // namespace tokenline
