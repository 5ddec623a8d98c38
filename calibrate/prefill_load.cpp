#include "calibrate/prefill_load.h"

#include <cmath>
#include <map>

#include "calibrate/sim_point.h"
#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"

namespace tokenline {

struct PrefillPricing::Loaded {
  Hardware hardware;
  std::shared_ptr<const OpProfile> profile;  // null: the roofline
  std::map<std::string, CostModel> models;   // by model config and layout: points share them
};

PrefillPricing::PrefillPricing(const std::string& hardware, const std::string& profile)
    : loaded_(std::make_unique<Loaded>(
          Loaded{load_hardware(hardware), profile.empty() ? nullptr : load_op_profile(profile), {}})) {}

PrefillPricing::~PrefillPricing() = default;

std::optional<PrefillLoad> PrefillPricing::load(const E2ePoint& p, const std::string& model_config) {
  const std::string where = "line " + std::to_string(p.line);
  const bool agg = p.mode == E2eMode::kAggregated;
  const E2eLayout& layout = agg ? p.agg : p.prefill;
  const std::string parallel = parallel_name(layout, where);
  const std::string key = model_config + "|" + parallel;
  auto it = loaded_->models.find(key);
  if (it == loaded_->models.end()) {
    CostOptions options;
    options.profile = loaded_->profile;
    const ModelConfig model = load_model(model_config);
    const Parallel layout_parsed = parse_parallel(parallel, where);
    try {
      validate_parallel(layout_parsed, model, where);
    } catch (const InputError&) {
      return std::nullopt;  // the point's simulation says why, as a failed point
    }
    it = loaded_->models
             .emplace(key, make_cost_model(model, layout_parsed,
                                           run_kv_layout(profile_engine(loaded_->profile.get()), model, "",
                                                         loaded_->hardware),
                                           loaded_->hardware, options))
             .first;
  }
  const CostModel& cm = it->second;
  PrefillLoad load;
  // A row whose client drew its lengths: the mean request (prefill is near linear in its tokens).
  const double osl = mean_length(p.osl, p.length_range_ratio);
  const auto isl = static_cast<int64_t>(std::lround(mean_length(p.isl, p.length_range_ratio)));
  const double cycle_s = (p.ttft_ms + (osl - 1) * p.tpot_ms) * 1e-3;
  load.requests_per_s = p.concurrency / cycle_s;
  load.prefill_s = prefill_step(cm, isl, 0, true).total_s;
  load.lanes = layout.attention_dp * (agg ? 1 : layout.workers);
  return load;
}

}  // namespace tokenline
