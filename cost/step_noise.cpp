#include "cost/step_noise.h"

#include <algorithm>
#include <string>

namespace tokenline {

StepNoiseSampler::StepNoiseSampler(const StepNoise& noise, const CostModel& cm, uint64_t seed,
                                   int32_t instance)
    : noise_(noise),
      experts_per_token_(cm.model.experts_per_token),
      load_rng_(seed, "expert_load/" + std::to_string(instance)),
      accept_rng_(seed, "mtp_accept/" + std::to_string(instance)) {
  if (noise.expert_skew && cm.model.is_moe() && cm.parallel.ep > 1) {
    load_ = std::make_unique<ExpertLoadModel>(cm.model.routed_experts, cm.parallel.ep, cm.model.moe_layers(),
                                              noise.moe, seed);
  }
}

double StepNoiseSampler::expert_imbalance(const StepBatches& step) {
  if (!load_) return 1.0;
  int64_t tokens = 0;
  for (const Batch& b : step.ranks) tokens += b.total_tokens();
  return load_->draw_imbalance(double(tokens) * experts_per_token_, load_rng_);
}

double StepNoiseSampler::draw_rate() {
  const double m = std::clamp(noise_.acceptance.mean, 0.0, 1.0);
  const double var = noise_.acceptance.stddev * noise_.acceptance.stddev;
  if (var <= 0 || m <= 0 || m >= 1) return m;
  // Beta with mean m and variance var: a + b = m(1 - m) / var - 1 (variance capped below m(1 - m)).
  const double concentration = std::max(m * (1 - m) / std::min(var, 0.99 * m * (1 - m)) - 1, 1e-3);
  const double x = accept_rng_.gamma(m * concentration, 1.0);
  const double y = accept_rng_.gamma((1 - m) * concentration, 1.0);
  return x + y > 0 ? x / (x + y) : m;
}

void StepNoiseSampler::accept_drafts(const StepBatches& step, std::vector<std::vector<int32_t>>& out) {
  out.clear();
  if (!noise_.mtp) return;
  const double rate = draw_rate();
  out.resize(step.ranks.size());
  for (size_t r = 0; r < step.ranks.size(); ++r) {
    for (const BatchEntry& e : step.ranks[r].entries) {
      int32_t accepted = 0;
      // Drafts are verified in order: the first rejection discards the rest.
      while (accepted < e.draft_tokens && accept_rng_.uniform01() < rate) ++accepted;
      out[r].push_back(accepted);
    }
  }
}

}  // namespace tokenline
