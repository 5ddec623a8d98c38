// Token sampling of a served request: OpenAI's temperature / top_p / top_k / seed on one logits row, and
// the log-probabilities a client asks for (logprobs / top_logprobs). Greedy (temperature 0) keeps the
// engine's own argmax, bit for bit; otherwise the CPU reference sampler (kernels/cpu, params.h's
// SampleParams rule) draws from pcg32(seed, stream = the request's output position), so a seed replays.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tokenline {

struct SamplingParams {
  float temperature = 1.0f;  // OpenAI's default; 0: greedy
  float top_p = 1.0f;
  int32_t top_k = 0;  // 0: every token
  uint64_t seed = 0;
  int32_t logprobs = -1;  // -1: none; n >= 0: the chosen token's logprob and the n most likely

  bool greedy() const { return temperature <= 0.0f; }
};

struct TopLogprob {
  int32_t token = 0;
  float logprob = 0;
};

struct TokenLogprobs {
  int32_t token = 0;
  float logprob = 0;            // log-softmax of the raw logits (before temperature), as vLLM reports
  std::vector<TopLogprob> top;  // the n most likely, most likely first (ties: lower id first)
};

// The token for one logits row: `greedy` (the engine's argmax) when params.greedy(), else a draw.
// REQUIRES: logits non-empty; 0 <= greedy < logits.size().
int32_t sample_token(std::span<const float> logits, const SamplingParams& params, uint64_t position,
                     int32_t greedy);

// log-softmax of logits at token, and the n most likely tokens with theirs.
TokenLogprobs token_logprobs(std::span<const float> logits, int32_t token, int32_t n);

}  // namespace tokenline
