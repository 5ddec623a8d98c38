// deepseek_decode_step: a DeepSeek-V3 tp8 decode step priced by an H200 profile (h200-sglang unless named)
// with timing overrides, the step the pricing tests of the CPU terms, the floor and the overlap rule read.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "topologies/hardware_loader.h"

namespace tokenline {

// `batch` requests at 1,023 cached tokens on one attention rank; `sets` as --profile-set takes them.
inline StepCost deepseek_decode_step(const std::string& sets, int64_t batch,
                                     const std::string& profile = "h200-sglang") {
  CostOptions o;
  auto p = load_op_profile(profile);
  apply_profile_sets(*p, sets);
  o.profile = std::move(p);
  const CostModel cm = make_cost_model(model_preset("deepseek-v3"), parse_parallel("tp8", "test"),
                                       KvLayout::kFp8E4m3, load_hardware("h200"), o);
  return decode_step(cm, batch, 1023);
}

}  // namespace tokenline
