// The per-op time scales an own profile prices its ops table with (op_profile_own.cpp): a measured run's
// op times over the profiled ones, fitted by `tokenline calibrate --trace` (calibrate/trace_fit.h).
#pragma once

#include <array>

#include "cost/op_profile.h"
#include "cost/step_cost.h"

namespace tokenline {

// Per ledger op: the profile's timing.op_scales entry for it, else timing.op_time_scale.
std::array<double, kOpCount> own_op_scales(const OpProfile& profile);

}  // namespace tokenline
