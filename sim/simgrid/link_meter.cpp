#include "sim/simgrid/link_meter.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include "traces/chrome_trace_writer.h"

namespace tokenline {
namespace {

constexpr double kPerMille = 1000;  // utilisation unit of the counters (integers in the trace format)
constexpr int kLinksPid = 0;        // the links' own process in links.json

}  // namespace

LinkMeter::LinkMeter(const sg::PlatformSpec& platform, double window_s)
    : platform_(platform), window_s_(window_s), bytes_(platform.links.size() * 2) {}

void LinkMeter::add(int link_dir, double start_s, double end_s, double bytes) {
  if (bytes <= 0) return;
  std::vector<double>& bins = bytes_[static_cast<size_t>(link_dir)];
  const double span_s = std::max(end_s - start_s, 0.0);
  const auto first = static_cast<size_t>(std::floor(start_s / window_s_));
  const auto last = span_s > 0 ? static_cast<size_t>(std::floor(end_s / window_s_)) : first;
  if (bins.size() <= last) bins.resize(last + 1, 0.0);
  if (span_s <= 0) {
    bins[first] += bytes;
    return;
  }
  for (size_t w = first; w <= last; ++w) {
    const double lo = std::max(start_s, double(w) * window_s_);
    const double hi = std::min(end_s, double(w + 1) * window_s_);
    if (hi > lo) bins[w] += bytes * (hi - lo) / span_s;
  }
}

double LinkMeter::total_bytes(int link_dir) const {
  double s = 0;
  for (double b : bytes_[static_cast<size_t>(link_dir)]) s += b;
  return s;
}

void LinkMeter::emit(ChromeTraceWriter& trace, int pid) const {
  trace.process_name(pid, "links (" + platform_.name + ")");
  std::string name;
  for (size_t d = 0; d < bytes_.size(); ++d) {
    const std::vector<double>& bins = bytes_[d];
    if (bins.empty()) continue;
    const sg::PlatformLink& link = platform_.links[d / 2];
    name = link.name + (d % 2 == 0 ? " up" : " down");
    const double capacity = link.bw_per_direction * window_s_;
    for (size_t w = 0; w < bins.size(); ++w) {
      const auto permille = static_cast<int64_t>(std::llround(bins[w] / capacity * kPerMille));
      trace.counter(pid, name, double(w) * window_s_, {{"utilisation_permille", permille}});
    }
    trace.counter(pid, name, double(bins.size()) * window_s_, {{"utilisation_permille", 0}});
  }
}

bool LinkMeter::write(const std::string& path, std::string* why) const {
  try {
    ChromeTraceWriter trace(path);
    emit(trace, kLinksPid);
    if (!trace.finish()) {
      *why = "could not write " + path;
      return false;
    }
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  return true;
}

}  // namespace tokenline
