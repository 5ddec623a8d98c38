// PrefillLoad: whether a measurement can come from an engine that prefills every prompt. A closed loop of
// C clients completes C / (TTFT + (osl - 1) x TPOT) requests per second (means, as measured; osl and isl the
// mean lengths where the row's client drew them, E2ePoint::length_range_ratio); each needs
// its prompt prefilled. Priced from the same tables as the simulation, one prompt's prefill alone takes P
// seconds of the instance, and the instance has R prefill lanes (attention DP ranks; a disaggregated
// deployment's prefill workers times theirs). The load rate x P / R is the share of the instance's time
// prefill alone would take. Near 1 the engine is saturated (a queue then shows in TTFT) or the pricing is
// slow - the tables price DeepSeek-R1's 8,192-token prefill about 1.4x what SGLang's measured TTFTs imply
// (26 us per extra prompt token against 39) - but above kMaxPrefillLoad no engine running those kernels
// reaches the measured rate, let alone while it decodes. Such rows were served another way than their
// columns say - most likely prompts repeated by the benchmark and answered from the engine's prefix cache
// (on by default in vLLM V1 and SGLang) - and calibrate sets them apart (mode "agg!") instead of fitting
// step terms to them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "calibrate/e2e_point.h"

namespace tokenline {

// Above the pricing's known prefill error (1.4x, above): 1.5.
inline constexpr double kMaxPrefillLoad = 1.5;

struct PrefillLoad {
  double requests_per_s = 0;  // the measured closed loop's rate
  double prefill_s = 0;       // one prompt's prefill alone, priced
  int32_t lanes = 1;          // prompts the instance prefills side by side
  double load() const { return requests_per_s * prefill_s / lanes; }
};

// What prices the prompts: a hardware preset or JSON path and a profile (embedded name or directory;
// empty: the roofline), each loaded once.
class PrefillPricing {
 public:
  PrefillPricing(const std::string& hardware, const std::string& profile);
  ~PrefillPricing();
  // The load of point `p` (aggregated, or disaggregated with its workers recorded) whose model is the
  // config file `model_config`; nullopt where its layout does not divide the model (GB200 rows of
  // DeepSeek-R1 at tp_size 72): its own simulation refuses it, and calibrate reports that point failed, with
  // the reason, beside the others. Throws InputError on a model the pricing rejects.
  std::optional<PrefillLoad> load(const E2ePoint& p, const std::string& model_config);

 private:
  struct Loaded;
  std::unique_ptr<Loaded> loaded_;
};

}  // namespace tokenline
