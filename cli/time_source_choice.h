// What prices a command's steps when the user did not say (docs/architecture.md "Where a step's time comes
// from"): the best source available for (hardware, engine). `--profile P` and `--engine E` name one (E on a
// GPU without an E profile: the nearest GPU's, transferred; cost/time_source_transfer.h); `--roofline` and
// `--ideal` ask for the seed's models; otherwise the engine is SGLang and its shipped profile on the hardware
// prices the run where that profile's tables cover the model's kernels on the layout, else the nearest
// other GPU's SGLang profile that covers them, transferred, else the GPU's own profile anyway (or the nearest
// GPU's transferred where it has none). Every choice comes with the reason the summary and metrics.json's
// configuration block print.
#pragma once

#include <string>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/parallel.h"
#include "topologies/hardware.h"

namespace tokenline::cli {

// The engine a run models when neither --engine nor --profile names one: SGLang, the engine of the seed's
// deployment and of most published points the profiles are validated on (docs/validation.md); issue 45
// "Defaults that fit the model" asks for it.
inline constexpr const char* kDefaultEngine = "sglang";

// The flags that decide the time source, as given.
struct TimeSourceFlags {
  std::string profile{};  // --profile
  std::string engine{};   // --engine
  bool roofline = false;  // --roofline
  bool ideal = false;     // --ideal
  bool replay = false;    // --backend replay:<trace>: the recorded run's times, nothing to choose
};

// What the run is priced by, and why.
struct TimeSourceChoice {
  std::string profile;     // the profile that prices ops ("": the roofline, or the replayed run;
                           // "transfer:<profile>" when transferred)
  std::string kind;        // "profile" | "transferred" | "roofline" | "ideal" | "replay"
  bool defaulted = false;  // chosen by the rule above, not named by --profile / --engine
  std::string why;         // one phrase: "--profile", "the shipped profile for h200 x sglang covers ...", ...
};

// The kernel ops (GEMMs, attention, MoE, the TP all-reduces) of `model` on `layouts` that `profile_name`
// leaves to the roofline, in a decode step (16 requests of 2K context per rank) and a 2K-token prefill;
// empty when the profile's tables price them all. Throws InputError where the profile cannot price the
// model at all (another GPU's, an own profile of another model).
std::vector<std::string> uncovered_kernels(const std::string& profile_name, const ModelConfig& model,
                                           const std::vector<Parallel>& layouts, const Hardware& hardware,
                                           const std::string& kv_layout_flag);

// Chooses the time source for `model` on `layouts` of `hardware`. Throws InputError for flags that
// contradict each other (--roofline beside --profile or --engine, an unknown engine: profile_for_engine's
// messages).
TimeSourceChoice choose_time_source(const TimeSourceFlags& flags, const ModelConfig& model,
                                    const std::vector<Parallel>& layouts, const Hardware& hardware,
                                    const std::string& kv_layout_flag);

}  // namespace tokenline::cli
