// The transferred time source: an engine's measured profile carried to a GPU it was not measured on
// (docs/hardware-and-engines.md "What is transferred"). What the profile says about the engine (its memory
// and admission block, its step terms: per-step and per-request CPU time, the per-layer step floor, the
// first-token latency, overlap scheduling, the eager launch gap) is carried unchanged; what it says about
// the GPU is carried as efficiency: each op costs the target's roofline x (the profile's measured time / the
// roofline of the profile's own GPU) on the same shape - the rule the profiles already apply to a shape
// they did not measure (topologies/profiles/README.md "Unmeasured shapes": a measured point x the ratio of
// the two rooflines), here across GPUs instead of across shapes. Ops the profile leaves to the roofline stay
// there. Loaded by name as "transfer:<profile>"; the profile's name in summaries and metrics.json.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

struct OpProfile;  // op_profile.h
struct CostModel;  // cost_model.h
class TimeSource;  // time_source.h
struct Hardware;   // topologies/hardware.h

inline constexpr std::string_view kTransferPrefix = "transfer:";

// True for "transfer:<profile>".
bool is_transfer_name(std::string_view name);

// "transfer:" + profile.
std::string transfer_name(const std::string& profile);

// Loads "transfer:<profile>": the profile (embedded name or directory) as load_op_profile reads it, marked
// transferred, named "transfer:<profile>"; its engine block's device memory is cleared, so the engine sizes
// its pools from the target GPU's (hbm.device_mib). Throws InputError for an own profile (`tokenline
// profile`: its ops table times one model on one machine, no roofline ratio to carry) and whatever loading
// the profile throws.
std::shared_ptr<OpProfile> load_transferred_profile(std::string_view name);

// How far apart two GPUs' rooflines are: |ln(HBM bandwidth ratio)| + |ln(dense FP8 peak ratio)|. The
// efficiency a kernel reaches over its roofline is carried from the nearest GPU by this measure (one rule,
// no per-case choice): B200 -> GB200 / B300, H200 <-> H100, and H200 -> B200 when B200 is left out.
double roofline_distance(const Hardware& a, const Hardware& b);

// The engine's shipped profiles on other GPUs than `target` (hardware name differs), nearest first by
// roofline_distance (ties by name). Empty for an engine without shipped profiles.
std::vector<std::string> transfer_sources(const std::string& engine, const Hardware& target);

// Under a transferred time source, the cost model it prices the ranks' work with on the profile's own GPU
// (what the profile's rows and terms apply to); else null.
const CostModel* transferred_source_model(const CostModel& cm);

// The time source of cm priced by cm.options.profile transferred to cm.hardware (make_cost_model calls it).
// REQUIRES: cm.options.profile->transferred; cm's rates built, its time source the roofline.
std::shared_ptr<const TimeSource> transferred_time_source(const CostModel& cm);

}  // namespace tokenline
