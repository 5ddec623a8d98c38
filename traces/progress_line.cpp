#include "traces/progress_line.h"

#include <cstdio>

namespace tokenline {

ProgressLine::ProgressLine(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressLine::draw(double time_s, int64_t arrived, int64_t done, bool final_line) {
  const auto now = std::chrono::steady_clock::now();
  const double wall_s = std::chrono::duration<double>(now - start_).count();
  if (!final_line && (wall_s < kQuietS || std::chrono::duration<double>(now - last_).count() < kPeriodS))
    return;
  last_ = now;
  drawn_ = true;
  const double per_s = wall_s > 0 ? 1.0 / wall_s : 0.0;
  std::fprintf(stderr, "\r[tokenline] t=%.1fs  arrived %lld  done %lld  %.0f req/s  %.0fx  %.0fs wall%s",
               time_s, static_cast<long long>(arrived), static_cast<long long>(done),
               static_cast<double>(done) * per_s, time_s * per_s, wall_s, final_line ? "\n" : "");
  std::fflush(stderr);
}

void ProgressLine::finish(double time_s, int64_t arrived, int64_t done) {
  if (enabled_ && drawn_) draw(time_s, arrived, done, true);
}

}  // namespace tokenline
