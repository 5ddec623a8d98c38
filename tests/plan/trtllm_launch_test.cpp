#include "plan/trtllm_launch.h"

#include <catch2/catch.hpp>

#include "tests/plan/launch_candidate.h"

namespace tokenline {
namespace {

using testing::launch_candidate;

TEST_CASE("TensorRT-LLM lines: world size, EP, the plan's step budget and batch, and its options file",
          "[plan]") {
  const std::vector<std::string> lines = trtllm_launch_lines(launch_candidate(false, "", "dp8-ep8", 2), "M");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "# 2 servers of:");
  // attention DP: every rank runs its own attention and scheduler
  CHECK(lines[1] == "printf 'enable_chunked_prefill: true\\nenable_attention_dp: true\\n' > extra.yaml");
  CHECK(lines[2] ==
        "trtllm-serve M --backend pytorch --tp_size 8 --ep_size 8 --max_num_tokens 8192 --max_batch_size 32 "
        "--extra_llm_api_options extra.yaml");
  CHECK(lines[3].find("load balancer") != std::string::npos);
  const std::vector<std::string> tp = trtllm_launch_lines(launch_candidate(false, "", "tp4", 1), "M");
  REQUIRE(tp.size() == 3);  // one server: nothing in front of it
  CHECK(tp[1].find("enable_attention_dp") == std::string::npos);
  CHECK(tp[2].find("--tp_size 4 --max_num_tokens") != std::string::npos);
}

TEST_CASE("TensorRT-LLM lines: PD context and generation servers move KV with the cache transceiver",
          "[plan]") {
  const std::vector<std::string> lines =
      trtllm_launch_lines(launch_candidate(true, "tp8", "dp8-ep8", 1), "M");
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == "# 1 context server of:");
  for (int i : {1, 4}) CHECK(lines[i].find("cache_transceiver_config") != std::string::npos);
  CHECK(lines[2].find("--tp_size 8 --max_num_tokens") != std::string::npos);
  CHECK(lines[5].find("--ep_size 8") != std::string::npos);
  CHECK(lines[6].find("trtllm-serve disaggregated") != std::string::npos);
}

}  // namespace
}  // namespace tokenline
