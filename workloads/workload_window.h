// WorkloadWindow: the options the CLI applies to any source, in this order: arrivals x time_scale; keep
// arrivals in [start_s, start_s + duration_s) and shift them by -start_s; stop after max_requests;
// closed_loop sets every arrival to 0 (the simulator then admits requests in order at its concurrency).
// Kept requests are renumbered 0, 1, 2, ... Reading stops at the window's end (arrivals are sorted). A kept
// arrival after limits::kMaxArrivalS (once scaled) throws InputError: virtual time would overflow.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "workloads/workload_source.h"

namespace tokenline {

struct WindowOptions {
  double time_scale = 1.0;                                      // > 0; 0.5 = twice the arrival rate
  double start_s = 0.0;                                         // after scaling
  double duration_s = std::numeric_limits<double>::infinity();  // after scaling
  int64_t max_requests = -1;                                    // -1 = all
  bool closed_loop = false;                                     // drop arrival times, keep order
};

class WindowedSource final : public WorkloadSource {
 public:
  // REQUIRES: options validated (time_scale > 0, start_s >= 0, duration_s > 0); see check_window().
  WindowedSource(std::unique_ptr<WorkloadSource> inner, WindowOptions options);
  std::optional<WorkloadRequest> next() override;
  int64_t skipped_lines() const override { return inner_->skipped_lines(); }
  std::string first_skip_reason() const override { return inner_->first_skip_reason(); }
  std::string describe() const override { return inner_->describe(); }
  const WorkloadSource& inner() const { return *inner_; }

 private:
  std::unique_ptr<WorkloadSource> inner_;
  WindowOptions options_;
  int64_t emitted_ = 0;
  bool done_ = false;
};

// Throws InputError naming the option (--time-scale, --start, --duration, --max-requests) if out of range.
void check_window(const WindowOptions& options);

}  // namespace tokenline
