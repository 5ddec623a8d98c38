#include "cli/time_source_choice.h"

#include <algorithm>
#include <span>

#include "common/input_error.h"
#include "cost/cost_model.h"
#include "cost/engine_behavior.h"
#include "cost/op_profile.h"
#include "cost/step_cost.h"
#include "cost/time_source_transfer.h"

namespace tokenline::cli {
namespace {

// The ops a profile's tables are there to price (topologies/profiles/README.md "Tables"): GEMMs, attention,
// the fused MoE, the indexer and the TP all-reduces. Norms, RoPE, routing and sampling stay on the roofline
// under every profile, so they do not decide whether one covers a model.
constexpr Op kKernelOps[] = {Op::kAProj,         Op::kQBProj,       Op::kSparseMla,  Op::kWindowAttn,
                             Op::kOProj,         Op::kDenseMlp,     Op::kExpertGemm, Op::kSharedExpert,
                             Op::kAttnAllreduce, Op::kMlpAllreduce, Op::kLmHead,     Op::kIndexerScore};

// The representative steps: a decode step of 16 requests at 2K context per rank, and a 2K-token prefill
// chunk (the shapes tests/cost/op_profile_price_test.cpp checks each shipped profile's claims on).
constexpr int64_t kDecodeBatch = 16;
constexpr int64_t kDecodeContext = 2047;
constexpr int64_t kPrefillTokens = 2048;

std::string phrase(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::vector<std::string> uncovered_kernels(const std::string& profile_name, const ModelConfig& model,
                                           const std::vector<Parallel>& layouts, const Hardware& hardware,
                                           const std::string& kv_layout_flag) {
  CostOptions options;
  options.profile = load_op_profile(profile_name);
  const KvLayout kv = run_kv_layout(profile_engine(options.profile.get()), model, kv_layout_flag, hardware);
  std::vector<std::string> missing;
  for (const Parallel& p : layouts) {
    const CostModel cm = make_cost_model(model, p, kv, hardware, options);
    for (const bool prefill : {false, true}) {
      const StepCost sc =
          prefill ? prefill_step(cm, kPrefillTokens, 0, true) : decode_step(cm, kDecodeBatch, kDecodeContext);
      for (const Op op : kKernelOps) {
        // a collective priced from a smaller group's rows is a bound, not this group's measurement
        if (sc[op].time_s <= 0 || (priced(sc[op].source) && !sc[op].smaller_group)) continue;
        const std::string name = std::string(op_name(op)) + (prefill ? " (prefill)" : " (decode)");
        if (std::find(missing.begin(), missing.end(), name) == missing.end()) missing.push_back(name);
      }
    }
  }
  return missing;
}

namespace {

// The source profile's name in a "transfer:<profile>" name.
std::string transferred_from(const std::string& name) {
  return name.substr(kTransferPrefix.size());
}

// A choice priced by `name`: a shipped profile, or another GPU's transferred.
TimeSourceChoice priced_by(const std::string& name, bool defaulted, const std::string& why) {
  return {.profile = name,
          .kind = is_transfer_name(name) ? "transferred" : "profile",
          .defaulted = defaulted,
          .why = why};
}

}  // namespace

TimeSourceChoice choose_time_source(const TimeSourceFlags& f, const ModelConfig& model,
                                    const std::vector<Parallel>& layouts, const Hardware& hardware,
                                    const std::string& kv_layout_flag) {
  if (f.roofline && (!f.profile.empty() || !f.engine.empty()))
    throw InputError(
        "--roofline", "either --roofline or a profile (--profile, --engine)",
        "both (" + (f.profile.empty() ? "--engine " + f.engine : "--profile " + f.profile) + ")");
  // A replay takes its times from the recorded run; a --profile given beside it still sizes the engine.
  if (f.replay)
    return {.profile = f.profile, .kind = "replay", .defaulted = false, .why = "--backend replay"};
  if (f.ideal && f.profile.empty() && f.engine.empty())
    return {.profile = "", .kind = "ideal", .defaulted = false, .why = "--ideal"};
  if (f.roofline) return {.profile = "", .kind = "roofline", .defaulted = false, .why = "--roofline"};
  if (!f.profile.empty() || !f.engine.empty()) {
    const std::string name = profile_for_engine(f.profile, f.engine, hardware);
    if (!f.profile.empty()) return priced_by(name, false, "--profile");
    if (!is_transfer_name(name)) return priced_by(name, false, "--engine " + f.engine);
    return priced_by(name, false,
                     "--engine " + f.engine + ": no profile " + hardware.name + "-" + f.engine + "; " +
                         transferred_from(name) + " is the engine's profile on the nearest GPU");
  }
  // The engine's own profile on this GPU where it measures every kernel; else the nearest GPU's profile of
  // the engine that does, transferred; else the GPU's own profile anyway (its engine and step terms, the
  // unmeasured kernels on the roofline), or without one the nearest GPU's transferred.
  const std::string candidate = hardware.name + "-" + kDefaultEngine;
  const std::vector<std::string> shipped = embedded_profile_names();
  const bool own = std::find(shipped.begin(), shipped.end(), candidate) != shipped.end();
  std::string gap = "no shipped profile " + candidate;
  if (own) {
    std::vector<std::string> missing;
    try {
      missing = uncovered_kernels(candidate, model, layouts, hardware, kv_layout_flag);
    } catch (const InputError& e) {
      missing = {std::string("its kernels (") + e.what() + ")"};
    }
    if (missing.empty())
      return priced_by(candidate, true,
                       "the shipped profile for " + hardware.name + " x " + kDefaultEngine +
                           " measures every kernel of " + model.name);
    gap = "the shipped profile " + candidate + " leaves " + phrase(missing) + " of " + model.name +
          " to the roofline";
  }
  const std::vector<std::string> sources = transfer_sources(kDefaultEngine, hardware);
  for (const std::string& source : sources) {
    const std::string name = transfer_name(source);
    try {
      if (!uncovered_kernels(name, model, layouts, hardware, kv_layout_flag).empty()) continue;
    } catch (const InputError&) {
      continue;
    }
    return priced_by(name, true,
                     gap + "; " + source + " measures every kernel of " + model.name +
                         " and is the nearest such GPU's " + kDefaultEngine + " profile");
  }
  if (own)
    return priced_by(candidate, true,
                     gap + " (no other GPU's " + std::string(kDefaultEngine) +
                         " profile measures them): its engine, step terms and measured kernels");
  if (!sources.empty())
    return priced_by(transfer_name(sources.front()), true,
                     gap + "; " + sources.front() + " is the nearest GPU's " + kDefaultEngine +
                         " profile (it leaves some kernels of " + model.name + " to the roofline)");
  return {.profile = "", .kind = "roofline", .defaulted = true, .why = gap};
}

}  // namespace tokenline::cli
