// MoE load imbalance under expert parallelism: how unevenly a step's token-expert pairs land on the EP
// ranks, from a skew model (uniform routing, Zipf popularity with exponent alpha, or a recorded per-layer
// expert histogram), optionally rebalanced by EPLB with redundant experts. The busiest EP rank sets the
// expert GEMM and the dispatch/combine time; step_cost takes the ratio busiest/mean as
// `expert_imbalance`. Per-step draws take the caller's Rng (one named stream per purpose).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/rng.h"

namespace tokenline {

enum class ExpertSkew {
  kUniform,    // every expert equally likely (imbalance from sampling noise only)
  kZipf,       // expert popularity ~ (popularity rank)^-alpha, hot experts placed at random per layer
  kHistogram,  // per-layer recorded expert counts (placement as recorded: expert e on rank e / (E/ep))
};
std::string_view to_string(ExpertSkew skew);

struct MoeLoadOptions {
  ExpertSkew skew = ExpertSkew::kUniform;
  double zipf_alpha = 1.0;                     // kZipf; 0 is uniform
  std::vector<std::vector<double>> histogram;  // kHistogram: [layer][expert] counts (>= 0, some > 0)
  bool eplb = false;                           // rebalance placement from the long-run expert loads
  int32_t redundant_experts = 0;               // EPLB: extra expert slots; (E + R) % ep == 0
};

class ExpertLoadModel {
 public:
  // Builds each layer's per-EP-rank share of the pairs. placement_seed seeds the Zipf hot-expert
  // placement (stream "expert_placement"). REQUIRES: experts % ep == 0, (experts + redundant) % ep == 0,
  // histogram rows of `experts` entries when kHistogram (validated at the edge).
  ExpertLoadModel(int32_t experts, int32_t ep, int32_t layers, const MoeLoadOptions& options,
                  uint64_t placement_seed);

  // Busiest EP rank's pairs over the mean, for a step routing `pairs` token-expert pairs: one layer drawn
  // at random (an unbiased one-layer estimate of the mean over layers), each rank's load Gaussian around
  // its share (the multinomial's mean and variance). 1 when pairs <= 0 or ep == 1. Three+ draws per call.
  double draw_imbalance(double pairs, Rng& rng) const;
  // Mean over layers of the busiest rank's share x ep: the imbalance with infinitely many pairs.
  double expected_imbalance() const;
  int32_t ep() const { return ep_; }
  const std::vector<double>& rank_shares(int32_t layer) const { return shares_[static_cast<size_t>(layer)]; }

 private:
  int32_t ep_ = 1;
  std::vector<std::vector<double>> shares_;  // [layer][EP rank], each row sums to 1
};

// EPLB placement of one layer: replicate the hottest experts into the redundant slots (each copy takes an
// equal part of its expert's load), then place copies largest first on the least-loaded rank with a free
// slot. Returns each rank's share. REQUIRES: load.size() % ep == 0 and (size + redundant) % ep == 0.
std::vector<double> eplb_rank_shares(const std::vector<double>& load, int32_t ep, int32_t redundant);

}  // namespace tokenline
