// metrics.json's "cost" block (docs/cost.md): what the run's GPUs cost at a price per GPU-hour, and that
// cost per million tokens. GPU-hours are the GPUs of every instance times the seconds it was up (a fixed
// fleet: the whole simulated time; an autoscaled one: integrated over the instances alive). Each "per
// million" figure charges the whole cost to that kind of token, as serving cost tables quote them: input
// (every prompt token), output (generated tokens), cached (the prompt tokens the prefix cache served).
#pragma once

#include <cstdint>
#include <string>

namespace tokenline {

struct CostInputs {
  double usd_per_gpu_hour = 0;
  std::string price_source;  // where the price came from: "--gpu-price", or the list price's source
  double gpu_hours = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_tokens = 0;
};

// The block as a JSON object's text; a per-million figure is null where no such token was counted.
std::string cost_block_json(const CostInputs& in);

}  // namespace tokenline
