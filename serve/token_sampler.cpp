#include "serve/token_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/cpu/kernels.h"

namespace tokenline {

int32_t sample_token(std::span<const float> logits, const SamplingParams& params, uint64_t position,
                     int32_t greedy) {
  if (params.greedy()) return greedy;
  int32_t out = greedy;
  const float temperature = params.temperature;
  const float top_p = params.top_p;
  const int32_t top_k = params.top_k;
  const uint64_t seed = params.seed;
  cpu::sample(SampleParams{.out = &out,
                           .logits = logits.data(),
                           .temperature = &temperature,
                           .top_k = &top_k,
                           .top_p = &top_p,
                           .seeds = &seed,
                           .steps = &position,
                           .n_rows = 1,
                           .vocab = static_cast<int32_t>(logits.size())});
  return out;
}

TokenLogprobs token_logprobs(std::span<const float> logits, int32_t token, int32_t n) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v - max));
  const double log_z = static_cast<double>(max) + std::log(sum);
  auto logprob = [&](int32_t id) {
    return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(id)]) - log_z);
  };
  TokenLogprobs out{.token = token, .logprob = logprob(token), .top = {}};
  const auto vocab = static_cast<int32_t>(logits.size());
  const int32_t keep = std::clamp(n, 0, vocab);
  if (keep == 0) return out;
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  auto more_likely = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), more_likely);
  for (int32_t i = 0; i < keep; ++i)
    out.top.push_back(
        TopLogprob{.token = ids[static_cast<size_t>(i)], .logprob = logprob(ids[static_cast<size_t>(i)])});
  return out;
}

}  // namespace tokenline
