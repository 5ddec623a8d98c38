// FitParameter: one named, bounded free parameter that `tokenline calibrate` may fit against end-to-end
// measurements. Only terms no kernel table measures belong here (per-kernel and per-collective fixed
// costs, and, while no measured op profile covers an op, the roofline's efficiency factors). Each has
// bounds that keep it physical and a `why` that goes into the fitted file beside its value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

enum class FitTarget {
  kHardware,    // a field of the hardware JSON: calibrate writes a copy with the value and runs --hardware
                // <copy>
  kProfileSet,  // a profile timing term: calibrate passes --profile-set name=value to sim
};

struct FitParameter {
  std::string name;  // what --fit names: "kernel_launch_s"
  FitTarget target = FitTarget::kHardware;
  std::string group;  // kHardware: the JSON object holding it ("overheads", "efficiency")
  std::string field;  // kHardware: the key in that object; kProfileSet: the --profile-set name
  double lower = 0;
  double upper = 0;
  bool log_scale = false;  // search log(value): the bounds span more than a factor of ~3
  std::string why;         // why it is free, and why these bounds
  // kProfileSet: the search's start when the profile's own value cannot be read (an embedded profile):
  // the profile format's default (topologies/profiles/README.md).
  double profile_default = 0;
};

// Every parameter calibrate knows, in a fixed order.
const std::vector<FitParameter>& fit_parameters();

// "a,b" -> those parameters, in the order given; throws InputError("--fit", the known names, found).
std::vector<FitParameter> parse_fit_list(std::string_view names);

}  // namespace tokenline
