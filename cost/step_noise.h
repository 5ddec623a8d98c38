// StepNoise: the seeded per-step randomness of a simulated step, drawn by the executor: MoE expert load
// imbalance (cost/moe_load.h) and MTP draft acceptance. One named pcg stream per purpose and
// instance ("expert_load/<i>", "mtp_accept/<i>"), seeded from --seed, so runs replay bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/rng.h"
#include "cost/moe_load.h"
#include "cost/step_cost.h"
#include "engine/core/executor.h"

namespace tokenline {

struct MtpAcceptance {
  double mean = 0.7;    // per-step acceptance rate of one draft, in [0, 1]
  double stddev = 0.0;  // across steps (Beta-distributed); 0: every step at the mean
};

struct StepNoise {
  bool expert_skew = false;  // draw the busiest EP rank's share each step (false: even routing)
  MoeLoadOptions moe;
  bool mtp = false;  // draw accepted drafts for decode entries (false: none accepted)
  MtpAcceptance acceptance;
};

class StepNoiseSampler {
 public:
  StepNoiseSampler(const StepNoise& noise, const CostModel& cm, uint64_t seed, int32_t instance);

  // The busiest EP rank's pairs over the mean for this step (1 without skew, EP or MoE).
  double expert_imbalance(const StepBatches& step);
  // Per rank, per entry: drafts accepted (leading successes at this step's rate); empty without MTP.
  void accept_drafts(const StepBatches& step, std::vector<std::vector<int32_t>>& out);
  // One step's acceptance rate: Beta(mean, stddev^2), or the mean when stddev is 0 or the mean is 0 or 1.
  double draw_rate();

 private:
  StepNoise noise_;
  int experts_per_token_ = 0;
  std::unique_ptr<ExpertLoadModel> load_;  // null when there is nothing to skew
  Rng load_rng_;
  Rng accept_rng_;
};

}  // namespace tokenline
