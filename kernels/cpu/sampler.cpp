// CPU sampling: greedy, temperature, top-k, top-p, one pcg32 draw per row (kernels/pcg_draw.h).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/pcg_draw.h"

namespace tokenline::cpu {
namespace {

int32_t argmax(const float* logits, int32_t vocab) {
  int32_t best = 0;
  for (int32_t i = 1; i < vocab; ++i) best = logits[i] > logits[best] ? i : best;
  return best;
}

int32_t sample_row(const SampleParams& p, int64_t r) {
  const float* logits = p.logits + r * p.vocab;
  if (p.temperature[r] <= 0.0f) return argmax(logits, p.vocab);
  const float max_logit = logits[argmax(logits, p.vocab)];
  std::vector<double> prob(static_cast<size_t>(p.vocab));
  double total = 0.0;
  for (int32_t i = 0; i < p.vocab; ++i)
    total += prob[i] = std::exp((logits[i] - max_logit) / p.temperature[r]);
  std::vector<int32_t> order(prob.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return prob[a] > prob[b]; });
  const int32_t k = p.top_k[r] > 0 ? std::min(p.top_k[r], p.vocab) : p.vocab;
  std::vector<char> candidate(prob.size(), 0);
  double kept = 0.0;
  for (int32_t i = 0; i < k; ++i) {
    candidate[order[i]] = 1;
    kept += prob[order[i]];
    if (kept >= p.top_p[r] * total) break;
  }
  Pcg32State rng = pcg32_seed(p.seeds[r], p.steps[r]);
  const double target = pcg32_uniform01(rng) * kept;
  double running = 0.0;
  int32_t last = 0;
  for (int32_t i = 0; i < p.vocab; ++i) {
    if (!candidate[i]) continue;
    running += prob[i];
    last = i;
    if (running > target) return i;
  }
  return last;
}

}  // namespace

void sample(SampleParams p) {
  parallel_for(p.n_rows, 4, [&](int64_t r) { p.out[r] = sample_row(p, r); });
}

}  // namespace tokenline::cpu
