#include "serve/token_sampler.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

namespace tokenline {

TEST_CASE("greedy sampling returns the engine's argmax untouched, a seed replays its draws",
          "[runtime][sampler]") {
  const std::vector<float> logits = {0.1f, 2.0f, 1.9f, -1.0f, 1.95f};
  SamplingParams greedy;
  greedy.temperature = 0;
  CHECK(sample_token(logits, greedy, 0, 3) == 3);  // whatever the engine chose stands, bit for bit
  SamplingParams hot;
  hot.temperature = 1.0f;
  hot.seed = 42;
  std::vector<int32_t> first, again, other;
  for (uint64_t pos = 0; pos < 64; ++pos) {
    first.push_back(sample_token(logits, hot, pos, 1));
    again.push_back(sample_token(logits, hot, pos, 1));
  }
  hot.seed = 43;
  for (uint64_t pos = 0; pos < 64; ++pos) other.push_back(sample_token(logits, hot, pos, 1));
  CHECK(first == again);
  CHECK(first != other);
  // At temperature 1 the three near-equal logits all appear; top_k 1 leaves only the argmax.
  CHECK(std::count(first.begin(), first.end(), 2) > 0);
  CHECK(std::count(first.begin(), first.end(), 4) > 0);
  hot.top_k = 1;
  for (uint64_t pos = 0; pos < 16; ++pos) CHECK(sample_token(logits, hot, pos, 1) == 1);
}

TEST_CASE("logprobs are the log-softmax of the raw logits, top alternatives most likely first",
          "[runtime][sampler]") {
  const std::vector<float> logits = {0.0f, std::log(3.0f), std::log(3.0f),
                                     std::log(1.0f)};  // p = 1/8, 3/8, 3/8, 1/8
  const TokenLogprobs lp = token_logprobs(logits, 3, 2);
  CHECK(lp.token == 3);
  CHECK(lp.logprob == Approx(std::log(1.0 / 8)).margin(1e-6));
  REQUIRE(lp.top.size() == 2);
  CHECK(lp.top[0].token == 1);  // a tie: the lower id first
  CHECK(lp.top[1].token == 2);
  CHECK(lp.top[0].logprob == Approx(std::log(3.0 / 8)).margin(1e-6));
  CHECK(token_logprobs(logits, 0, 0).top.empty());
}

}  // namespace tokenline
