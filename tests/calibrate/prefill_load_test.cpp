// PrefillLoad: a measured closed loop's request rate times one prompt's priced prefill, over the lanes.
#include "calibrate/prefill_load.h"

#include <catch2/catch.hpp>
#include <string>

#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {

// 64 clients of 2,000 / 100 tokens measuring 100 ms TTFT and 9.9 ms TPOT: 64 / (0.1 + 99 x 0.0099) s.
E2ePoint llama_point(int32_t tp, int32_t dp) {
  E2ePoint p;
  p.line = 7;
  p.model_path = "meta-llama/Llama-3.1-8B-Instruct";
  p.concurrency = 64;
  p.isl = 2000;
  p.osl = 100;
  p.agg.tp = tp;
  p.agg.attention_dp = dp;
  p.ttft_ms = 100;
  p.tpot_ms = 9.9;
  return p;
}

double priced_prefill_s(const char* parallel, const std::string& profile = "", int64_t tokens = 2000) {
  CostOptions o;
  o.max_chunk_tokens = 2000;
  if (!profile.empty()) o.profile = load_op_profile(profile);
  const ModelConfig m = model_preset("llama-3.1-8b");
  return prefill_step(make_cost_model(m, parse_parallel(parallel, "test"), m.default_kv_layout,
                                      load_hardware("h200"), o),
                      tokens, 0, true)
      .total_s;
}

}  // namespace

TEST_CASE("prefill load is the measured request rate times the priced prefill over the lanes",
          "[prefill_load]") {
  const double rate = 64 / (0.1 + 99 * 0.0099);
  const PrefillLoad one = PrefillPricing("h200", "").load(llama_point(1, 1), "llama-3.1-8b").value();
  CHECK(one.requests_per_s == Approx(rate));
  CHECK(one.lanes == 1);
  CHECK(one.prefill_s == Approx(priced_prefill_s("tp1")));
  CHECK(one.load() == Approx(rate * priced_prefill_s("tp1")));
  // Two attention DP ranks prefill two prompts side by side.
  const PrefillLoad dp2 = PrefillPricing("h200", "").load(llama_point(1, 2), "llama-3.1-8b").value();
  CHECK(dp2.lanes == 2);
  CHECK(dp2.load() == Approx(rate * dp2.prefill_s / 2));
  // A disaggregated deployment prefills on its prefill workers.
  E2ePoint pd = llama_point(1, 1);
  pd.mode = E2eMode::kDisaggregated;
  pd.prefill.tp = 2;
  pd.prefill.workers = 3;
  const PrefillLoad split = PrefillPricing("h200", "").load(pd, "llama-3.1-8b").value();
  CHECK(split.lanes == 3);
  CHECK(split.prefill_s == Approx(priced_prefill_s("tp2")));
  // With a profile, its kernel tables price the prompt.
  const double profiled =
      PrefillPricing("h200", "h200-sglang").load(llama_point(1, 1), "llama-3.1-8b").value().prefill_s;
  CHECK(profiled == Approx(priced_prefill_s("tp1", "h200-sglang")));
  CHECK(profiled != Approx(one.prefill_s));
  // A client that drew lengths in [0.8 L, L]: the mean request, 1,800 / 90 tokens.
  E2ePoint drawn = llama_point(1, 1);
  drawn.length_range_ratio = 0.8;
  const PrefillLoad mean = PrefillPricing("h200", "").load(drawn, "llama-3.1-8b").value();
  CHECK(mean.requests_per_s == Approx(64 / (0.1 + 89 * 0.0099)));
  CHECK(mean.prefill_s == Approx(priced_prefill_s("tp1", "", 1800)));
}

// A layout that does not divide the model (Llama-3.1-8B's 32 heads over TP 3) has no load: its own
// simulation refuses it and calibrate reports that point failed, beside the others.
TEST_CASE("a point whose layout does not divide the model has no prefill load", "[prefill_load]") {
  CHECK_FALSE(PrefillPricing("h200", "").load(llama_point(3, 1), "llama-3.1-8b").has_value());
  CHECK(PrefillPricing("h200", "").load(llama_point(4, 1), "llama-3.1-8b").has_value());
}
