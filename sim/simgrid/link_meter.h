// LinkMeter: bytes the simgrid backends put on each platform link direction, binned into fixed windows
// of virtual time (a transfer's bytes spread evenly over the time it was in flight), and written as
// Chrome-trace counters: one track per link direction that carried anything, its utilisation in per
// mille of the link's bandwidth per window. Single-threaded, like the actors that feed it.
#pragma once

#include <string>
#include <vector>

#include "sim/simgrid/simgrid_platform.h"
#include "traces/chrome_trace_writer.h"

namespace tokenline {

inline constexpr double kLinkWindowS = 1.0;  // one sample per link direction per simulated second: ~10 MB
                                             // for the Mooncake trace's 5,600 s on two nodes

class LinkMeter {
 public:
  // REQUIRES: platform outlives the meter; window_s > 0.
  LinkMeter(const sg::PlatformSpec& platform, double window_s);

  // `bytes` crossed link direction `link_dir` (link * 2, + 1 when down) between start_s and end_s.
  void add(int link_dir, double start_s, double end_s, double bytes);
  double total_bytes(int link_dir) const;
  // Appends the counters to a trace under process `pid` (trace.json gets them as the "links" process).
  void emit(ChromeTraceWriter& trace, int pid) const;
  // Writes the counters alone as a Chrome trace (links.json); false with why on failure.
  bool write(const std::string& path, std::string* why) const;

 private:
  const sg::PlatformSpec& platform_;
  double window_s_;
  std::vector<std::vector<double>> bytes_;  // [link_dir][window]
};

}  // namespace tokenline
