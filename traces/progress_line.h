// ProgressLine: the status line a long run rewrites in place on stderr: simulated (or run) time, requests
// arrived and done, requests done per wall second and simulated seconds per wall second. Silent when
// disabled (the CLI enables it only when stderr is a terminal) and for the first kQuietS wall seconds, so
// short runs and redirected output never see it. Reads the wall clock, never writes an output file.
#pragma once

#include <chrono>
#include <cstdint>

namespace tokenline {

class ProgressLine {
 public:
  static constexpr double kQuietS = 2.0;       // wall seconds before the first line
  static constexpr double kPeriodS = 0.25;     // wall seconds between redraws
  static constexpr int64_t kCheckCalls = 256;  // tick() calls between looks at the clock

  explicit ProgressLine(bool enabled);
  // Called once per step (cheap): redraws when due.
  void tick(double time_s, int64_t arrived, int64_t done) {
    if (enabled_ && ++calls_ % kCheckCalls == 0) draw(time_s, arrived, done, false);
  }
  // The last figures and a newline, if a line was ever drawn.
  void finish(double time_s, int64_t arrived, int64_t done);

 private:
  void draw(double time_s, int64_t arrived, int64_t done, bool final_line);

  bool enabled_;
  bool drawn_ = false;
  int64_t calls_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace tokenline
