#include "plan/sglang_launch.h"

#include <catch2/catch.hpp>

#include "tests/plan/launch_candidate.h"

namespace tokenline {
namespace {

using testing::launch_candidate;

TEST_CASE("SGLang lines: DP attention scales the per-rank chunk and max running by the dp size", "[plan]") {
  const std::vector<std::string> lines =
      sglang_launch_lines(launch_candidate(false, "", "dp8-ep8", 2), "M", MoeComm::kAllToAll);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "# 2 servers of:");
  CHECK(lines[1] ==
        "python3 -m sglang.launch_server --model-path M --tp-size 8 --dp-size 8 --enable-dp-attention "
        "--ep-size 8 --moe-a2a-backend deepep --chunked-prefill-size 65536 --max-running-requests 256");
  CHECK(lines[2].find("sglang_router.launch_router --worker-urls") != std::string::npos);
}

// A plan priced with SGLang's default (no all-to-all: server_args.py moe_a2a_backend "none") launches it by
// leaving the flag out; one priced with DeepEP's all-to-all (the seed's engine) names it.
TEST_CASE("SGLang lines: --moe-a2a-backend deepep only where the plan priced the all-to-all", "[plan]") {
  const std::vector<std::string> local =
      sglang_launch_lines(launch_candidate(false, "", "tp8-ep8", 1), "M", MoeComm::kLocalExperts);
  CHECK(local[1].find("--ep-size 8 --chunked-prefill-size") != std::string::npos);
  CHECK(local[1].find("moe-a2a-backend") == std::string::npos);
  const std::vector<std::string> a2a =
      sglang_launch_lines(launch_candidate(false, "", "tp8-ep8", 1), "M", MoeComm::kAllToAll);
  CHECK(a2a[1].find("--ep-size 8 --moe-a2a-backend deepep") != std::string::npos);
  const std::vector<std::string> tp =
      sglang_launch_lines(launch_candidate(false, "", "tp8", 1), "M", MoeComm::kAllToAll);
  CHECK(tp[1].find("moe-a2a-backend") == std::string::npos);  // no EP, nothing to dispatch
}

TEST_CASE("SGLang lines: PD has a prefill and a decode server and a PD router", "[plan]") {
  const std::vector<std::string> lines =
      sglang_launch_lines(launch_candidate(true, "tp8", "dp8-ep8", 1), "M", MoeComm::kLocalExperts);
  REQUIRE(lines.size() == 5);
  CHECK(lines[1].find("--tp-size 8 --chunked-prefill-size 8192") != std::string::npos);
  CHECK(lines[1].find("--disaggregation-mode prefill") != std::string::npos);
  CHECK(lines[3].find("--disaggregation-mode decode") != std::string::npos);
  CHECK(lines[4].find("--pd-disaggregation") != std::string::npos);
}

TEST_CASE("SGLang lines: a 16-GPU server spans two nodes", "[plan]") {
  const std::vector<std::string> lines =
      sglang_launch_lines(launch_candidate(false, "", "tp16", 1), "M", MoeComm::kLocalExperts);
  CHECK(lines[1].find("--tp-size 16") != std::string::npos);
  CHECK(lines[1].find("--nnodes 2") != std::string::npos);
}

}  // namespace
}  // namespace tokenline
