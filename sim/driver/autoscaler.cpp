#include "sim/driver/autoscaler.h"

#include <algorithm>
#include <cmath>

namespace tokenline {

std::string_view to_string(ScaleMetric metric) {
  switch (metric) {
    case ScaleMetric::kQueue:
      return "queue";
    case ScaleMetric::kConcurrency:
      return "concurrency";
    case ScaleMetric::kKv:
      return "kv";
    case ScaleMetric::kSlo:
      return "slo";
  }
  return "";
}

int32_t AutoscaleConfig::window_ticks() const {
  return std::max<int32_t>(1, static_cast<int32_t>(std::lround(window_s / interval_s)));
}

// HPA: desiredReplicas = ceil[currentReplicas x (currentMetricValue / desiredMetricValue)], skipped while
// the ratio is within the tolerance of 1. The SLO metric is a miss fraction whose target is 1 - the
// attainment asked for.
int32_t Autoscaler::raw(int32_t current, std::optional<double> metric) const {
  if (!metric) return current;
  const double target = config_.metric == ScaleMetric::kSlo ? 1.0 - config_.target : config_.target;
  const double ratio = *metric / target;
  if (std::abs(ratio - 1.0) <= config_.tolerance) return current;
  // A tiny epsilon keeps a ratio that is whole in exact arithmetic from rounding up one instance too many.
  constexpr double kCeilSlack = 1e-9;
  const double wanted = std::ceil(static_cast<double>(current) * ratio - kCeilSlack);
  return static_cast<int32_t>(std::clamp(wanted, 0.0, static_cast<double>(config_.max_instances)));
}

// HPA's stabilizeRecommendationWithBehaviors: up = min over the scale-up window, down = max over the
// scale-down window (both including this recommendation); the count moves up to `up` or down to `down`.
int32_t Autoscaler::recommend(double now_s, int32_t current, std::optional<double> metric) {
  const int32_t wanted = std::clamp(raw(current, metric), config_.min_instances, config_.max_instances);
  last_raw_ = wanted;
  const double keep_s = std::max(config_.scale_up_stabilization_s, config_.scale_down_stabilization_s);
  while (!history_.empty() && history_.front().time_s < now_s - keep_s) history_.pop_front();
  int32_t up = wanted, down = wanted;
  for (const Recommendation& r : history_) {
    if (r.time_s > now_s - config_.scale_up_stabilization_s) up = std::min(up, r.instances);
    if (r.time_s > now_s - config_.scale_down_stabilization_s) down = std::max(down, r.instances);
  }
  history_.push_back({now_s, wanted});
  int32_t next = current;
  if (next < up) next = up;
  if (next > down) next = down;
  return std::clamp(next, config_.min_instances, config_.max_instances);
}

}  // namespace tokenline
