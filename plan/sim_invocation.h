// The `tokenline sim` command line that evaluates (and reproduces) one candidate at one rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/candidate_space.h"

namespace tokenline {

// What every probe of a plan shares, as the user gave it.
struct PlanTarget {
  std::string model;
  std::string cluster;   // "" when --hardware/--gpus name the GPUs
  std::string hardware;  // used when cluster is ""
  std::string workload;  // "" = the embedded default
  std::string slo;       // as given, e.g. "ttft=2s,tpot=50ms"
  int64_t max_requests = 0;
  uint64_t seed = 0;
  std::string profile;      // op profile name or directory that prices every probe ("": the roofline and
                            // the seed's engine)
  std::string profile_set;  // its timing overrides "name=value,..." ("": none)
  bool profile_defaulted = false;  // `profile` is the best available, chosen as `tokenline sim` chooses it
                                   // (cli/time_source_choice.h): no --profile, --engine or --roofline
  std::string weights_format;      // --weights-format ("": the checkpoint's)
};

// Arguments after the binary: "sim" "--model" ... "--out" out_dir.
std::vector<std::string> sim_arguments(const PlanTarget& t, const Candidate& c, const std::string& time_scale,
                                       const std::string& out_dir);

// "tokenline sim ..." with each argument single-quoted when it holds a character the shell would read.
std::string sim_command_line(const std::vector<std::string>& arguments);

}  // namespace tokenline
