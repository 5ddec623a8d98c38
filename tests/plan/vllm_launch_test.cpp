#include "plan/vllm_launch.h"

#include <catch2/catch.hpp>

#include "tests/plan/launch_candidate.h"

namespace tokenline {
namespace {

using testing::launch_candidate;

TEST_CASE("vLLM lines: each data-parallel rank keeps the plan's per-rank token budget and batch", "[plan]") {
  const std::vector<std::string> lines = vllm_launch_lines(launch_candidate(false, "", "dp8-ep8", 2), "M");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "# 2 servers of:");
  CHECK(lines[1] ==
        "vllm serve M --tensor-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel "
        "--max-num-batched-tokens 8192 --max-num-seqs 32");
  CHECK(lines[2].find("load balancer") != std::string::npos);
  const std::vector<std::string> one = vllm_launch_lines(launch_candidate(false, "", "dp2-tp4", 1), "M");
  REQUIRE(one.size() == 2);  // one server: nothing in front of it
  CHECK(one[1].find("--tensor-parallel-size 4 --data-parallel-size 2 --max-num-batched-tokens") !=
        std::string::npos);
}

TEST_CASE("vLLM lines: PD servers exchange KV through NIXL behind a proxy", "[plan]") {
  const std::vector<std::string> lines = vllm_launch_lines(launch_candidate(true, "tp8", "dp8-ep8", 1), "M");
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "# 1 prefill server of:");
  CHECK(lines[1].find("--tensor-parallel-size 8 --max-num-batched-tokens 8192") != std::string::npos);
  for (int i : {1, 3}) CHECK(lines[i].find("--kv-transfer-config") != std::string::npos);
  CHECK(lines[1].find("NixlConnector") != std::string::npos);
  CHECK(lines[4].find("proxy") != std::string::npos);
}

TEST_CASE("vLLM lines: a 16-GPU server spans two nodes", "[plan]") {
  const std::vector<std::string> lines = vllm_launch_lines(launch_candidate(false, "", "tp16", 1), "M");
  CHECK(lines[0].find("2 nodes") != std::string::npos);
  CHECK(lines[1].find("--tensor-parallel-size 16") != std::string::npos);
}

}  // namespace
}  // namespace tokenline
