// A run's machine speed probe read back from its metrics.json (run.speed_probe_s, written by `tokenline
// run`), for `sim --speed-of` and `calibrate --trace`: the ratio of two probes is how much slower the machine
// ran.
#pragma once

#include <optional>
#include <string>

namespace tokenline {

// `run` is a run's output directory or its metrics.json. Throws InputError naming the file when it cannot
// be read or holds no run.speed_probe_s > 0 (a simulation, or a run made before probes were recorded).
double run_speed_probe_s(const std::string& run);

// The probe of the run whose trace is `trace` (the metrics.json beside it); nullopt when there is none.
std::optional<double> trace_run_speed_probe_s(const std::string& trace);

}  // namespace tokenline
