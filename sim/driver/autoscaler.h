// Autoscaler: the scaling policy of an autoscaled simulation (docs/autoscaling.md), written after the
// Kubernetes Horizontal Pod Autoscaler's algorithm so that its flags and defaults carry over:
//   desired = ceil(current x metric / target), unchanged while |metric / target - 1| <= tolerance
// (HPA's "algorithm details"; --horizontal-pod-autoscaler-tolerance, default 0.1), clamped to
// [min, max] instances (minReplicas, default 1; maxReplicas), then stabilised: a scale-up takes the lowest
// recommendation of the scale-up window (behavior.scaleUp.stabilizationWindowSeconds, default 0 s) and a
// scale-down the highest of the scale-down window (--horizontal-pod-autoscaler-downscale-stabilization,
// default 5m), so the count never drops within that window of a higher recommendation. The controller
// runs once per sync period (--horizontal-pod-autoscaler-sync-period, default 15 s) over the metric
// averaged across the last window (Knative KPA's stable-window, default 60 s).
// Pure logic: no clock, no simulation; the driver (sim/driver/simulation.cpp) feeds it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace tokenline {

// What the policy reads, each averaged over the metric window.
enum class ScaleMetric {
  kQueue,        // waiting requests per live instance (Dynamo's planner: prefill queue)
  kConcurrency,  // requests in the instance (waiting + running) per live instance (Knative KPA)
  kKv,           // KV pages used / KV pages held by live instances (Dynamo's planner: KV utilisation)
  kSlo,          // share of the requests finished in the window that missed the --slo
};
std::string_view to_string(ScaleMetric metric);

struct AutoscaleConfig {
  int32_t max_instances = 0;  // HPA maxReplicas; 0: autoscaling off (a fixed fleet)
  int32_t min_instances = 1;  // HPA minReplicas (default 1)
  int32_t initial_instances = 1;
  ScaleMetric metric = ScaleMetric::kQueue;
  // The metric's target per instance: waiting or in-instance requests (queue, concurrency), a KV use
  // fraction (kv), an SLO attainment in (0, 1) (slo: the miss fraction's target is 1 - it).
  double target = 0;
  double interval_s = 15.0;             // HPA --horizontal-pod-autoscaler-sync-period default 15s
  double window_s = 60.0;               // Knative KPA stable-window default 60s; a whole number of intervals
  double tolerance = 0.1;               // HPA --horizontal-pod-autoscaler-tolerance default 0.1
  double scale_up_stabilization_s = 0;  // HPA behavior.scaleUp.stabilizationWindowSeconds default 0
  double scale_down_stabilization_s = 300;  // HPA --horizontal-pod-autoscaler-downscale-stabilization 5m
  // A new instance's cold start, before it takes requests: its weights over the storage link, then the
  // engine's start-up (docs/autoscaling.md gives the defaults' sources).
  double weights_load_s = 0;
  double engine_start_s = 0;
  bool enabled() const { return max_instances > 0; }
  double cold_start_s() const { return weights_load_s + engine_start_s; }
  // Sync periods per metric window (at least one).
  int32_t window_ticks() const;
};

class Autoscaler {
 public:
  explicit Autoscaler(const AutoscaleConfig& config) : config_(config) {}

  // One sync at now_s with `current` instances counted (starting and live; draining ones are leaving) and
  // the metric over the window (nullopt: no sample, e.g. no request finished for kSlo: the count stays).
  // Returns the instance count to move to. REQUIRES: now_s does not decrease between calls.
  int32_t recommend(double now_s, int32_t current, std::optional<double> metric);
  // The last call's raw recommendation (before stabilisation), for the outputs.
  int32_t last_raw() const { return last_raw_; }

 private:
  struct Recommendation {
    double time_s;
    int32_t instances;
  };
  int32_t raw(int32_t current, std::optional<double> metric) const;

  AutoscaleConfig config_;
  std::deque<Recommendation> history_;  // within the longer stabilisation window
  int32_t last_raw_ = 0;
};

}  // namespace tokenline
