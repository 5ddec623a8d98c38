// FleetLog: what an autoscaled run's fleet did over time (docs/autoscaling.md), kept by the driver and
// written as metrics.json's "autoscaling" block: each instance slot's state (off, starting = paying its
// cold start, live = taking requests, draining = taking none and finishing its own), the instances over
// time (a change point per state change), GPU-hours (GPUs x seconds of every slot not off), the scale
// decisions, and the SLO attainment of the requests finished in each metric window. It also keeps the
// time integrals the policy's metric is averaged from (waiting and in-instance requests, KV pages used and
// held) and answers the metric over the last window at each sync. No clock, no simulation: every call
// passes the virtual time, which must not decrease.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "sim/driver/autoscaler.h"

namespace tokenline {

enum class SlotState { kOff, kStarting, kLive, kDraining };

class FleetLog {
 public:
  // gpus[i]: slot i's GPUs. `slo_enabled`: on_finished's `good` means something (an --slo was given).
  FleetLog(const AutoscaleConfig& config, std::vector<int32_t> gpus, bool slo_enabled);

  SlotState state(int32_t slot) const { return slots_[static_cast<size_t>(slot)].state; }
  void set_state(int32_t slot, SlotState state, double now_s);
  int32_t count(SlotState state) const;
  int32_t slots() const { return static_cast<int32_t>(slots_.size()); }

  // The slot's load from now_s on: requests waiting and running, KV pages used and held (over its ranks).
  void on_load(int32_t slot, double now_s, int64_t waiting, int64_t running, int64_t kv_used_pages,
               int64_t kv_pages);
  // What a draining slot held when its drain began (requests in it, KV pages someone needs, cached pages)
  // and, once drained, the pages someone still needs (0: every request's pages came back) - metrics.json's
  // drain_log, which the conservation tests read.
  void on_drain_start(int32_t slot, double now_s, int64_t requests, int64_t used_pages, int64_t cached_pages);
  void on_drain_end(int32_t slot, double now_s, int64_t used_pages);
  // A request completed at finish_s; good: within the --slo.
  void on_finished(double finish_s, bool good);
  // One sync at now_s: the policy's metric over the last window (nullopt: nothing to average).
  std::optional<double> sync(double now_s);
  // The sync's decision (recorded when `desired` differs from `current`).
  void on_decision(double now_s, int32_t current, int32_t desired, std::optional<double> metric);
  // The run ended at end_s: every slot still up counts until then.
  void close(double end_s);

  double gpu_hours() const { return gpu_s_ / 3600.0; }
  // metrics.json's "autoscaling" object, as JSON text. REQUIRES: close() was called.
  std::string json() const;

 private:
  struct Slot {
    SlotState state = SlotState::kOff;
    int32_t gpus = 0;
    int64_t waiting = 0, running = 0, kv_used = 0, kv_pages = 0;
  };
  struct Integrals {  // from time 0 to time_s
    double time_s = 0;
    double waiting = 0, in_instance = 0, kv_used = 0, kv_pages = 0, serving = 0;
    int64_t finished = 0, good = 0;
  };
  struct ChangePoint {
    double time_s;
    int32_t live, starting, draining;
  };
  struct Decision {
    double time_s;
    int32_t from, to;
    std::optional<double> metric;
  };
  struct Window {
    int64_t finished = 0, good = 0;
  };
  struct Drain {
    int32_t slot = 0;
    double start_s = 0, end_s = -1;
    int64_t requests = 0, used_pages = 0, cached_pages = 0, used_pages_at_end = 0;
  };
  void advance(double now_s);
  void note_counts(double now_s);

  AutoscaleConfig config_;
  bool slo_enabled_;
  std::vector<Slot> slots_;
  int64_t waiting_ = 0, running_ = 0, kv_used_ = 0, kv_pages_ = 0;  // over the slots
  int32_t serving_ = 0;                                             // live + draining
  int32_t up_gpus_ = 0;                                             // GPUs of slots not off
  int32_t up_ = 0;                                                  // slots not off
  Integrals now_;
  std::deque<Integrals> syncs_;  // the last window_ticks() + 1 syncs' integrals (the first: time 0)
  double gpu_s_ = 0;
  double up_instance_s_ = 0;  // instance-seconds not off
  int32_t peak_up_ = 0;
  int64_t cold_starts_ = 0, cancelled_starts_ = 0, drains_ = 0;
  std::vector<ChangePoint> changes_;
  std::vector<Decision> decisions_;
  std::vector<Window> windows_;  // by finish time, window_s wide from 0
  std::vector<Drain> drain_log_;
  double end_s_ = 0;
};

// An autoscaled PD run's "autoscaling" object, as JSON text: each pool's block ("prefill", "decode") and the
// totals over both (scale_ups, scale_downs, cold_starts, cancelled_starts, drains, instances_mean,
// gpu_hours). REQUIRES: both logs were closed.
std::string pd_fleet_json(const FleetLog& prefill, const FleetLog& decode);

}  // namespace tokenline
