// SimConfig: everything one `tokenline sim` run needs, as validated native values (the CLI parses and
// checks; nothing below it sees a string option). Closed sets are enums with a to_string each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cost/overlap.h"
#include "cost/step_noise.h"
#include "engine/core/instance.h"
#include "engine/core/router.h"
#include "sim/driver/autoscaler.h"
#include "traces/metrics.h"
#include "traces/output_config.h"

namespace tokenline {

enum class Backend { kAnalytic, kSimgrid };
std::string_view to_string(Backend backend);

// How requests enter: at their (windowed) workload times (open loop) or N in flight (closed loop, as
// `vllm bench serve --max-concurrency`: the next request is sent when one leaves). The window itself
// (--time-scale, --start, --duration, --max-requests) is applied by the workload source.
struct FeedConfig {
  int32_t concurrency = 0;  // 0: open loop at workload times
  // Closed loop: the first N requests are a warm-up phase that drains before the rest are sent (aiperf's
  // --warmup-request-count; sim/driver/feeder.h); metrics.json leaves them out of latency_ms and goodput
  int64_t warmup_requests = 0;
  // The warm-up phase's requests in effect: none in open loop.
  int64_t warmup() const { return concurrency > 0 ? warmup_requests : 0; }
  double request_latency_s =
      0;  // mean, send to engine (the profile's request_latency_s; sim/driver/feeder.h)
  // The client gets each first token this long after its step (the profile's first_token_latency_s;
  // Recorder::set_first_token_latency).
  double first_token_latency_s = 0;
};

// A price per GPU-hour for metrics.json's "cost" block (traces/cost_block.h); 0: no block.
struct CostConfig {
  double usd_per_gpu_hour = 0;
  std::string price_source;  // "--gpu-price", or the hardware's list price and its source
  bool enabled() const { return usd_per_gpu_hour > 0; }
};

struct SimConfig {
  std::string model_name;  // for the run block
  std::string hardware_name;
  std::string cluster_name;  // empty without --cluster
  std::string
      cluster_source;  // --backend simgrid: the cluster preset or JSON path its platform is built from
  std::string parallel_name;
  std::string workload_name;
  Backend backend = Backend::kAnalytic;
  Overlap overlap = Overlap::kNone;  // simgrid backend: the seed's compute / comm overlap level
  PlacementPolicy router = PlacementPolicy::kRoundRobin;  // across instances
  KvAwareWeights router_weights;                          // --router kv-aware (engine/core/placement.h)
  // SGLang's --scheduler-recv-interval (default 1; python/sglang/srt/managers/scheduler_recv_skipper.py,
  // 0.5.x): while an instance decodes, requests sent to it wait until its scheduler next receives, which it
  // does once the steps since the last receive weigh this much - a decode step 1, a step with prefill 1000
  // (so the next step receives). An instance with no running request receives at once. Aggregated runs.
  int32_t scheduler_recv_interval = 1;
  // One entry per instance, each with its own parallelism (and so its own ranks and KV pool).
  struct InstanceSpec {
    std::string parallel_name;  // "tp8", "dp8-ep8", ...
    InstanceConfig config;      // scheduler + per-rank KV config
    int32_t gpus = 0;           // its GPUs (GPU-hours; 0: not known)
  };
  std::vector<InstanceSpec> instances;
  int32_t instance_count() const { return static_cast<int32_t>(instances.size()); }
  FeedConfig feed;
  StepNoise noise;  // per-step MoE load imbalance and MTP acceptance draws (seeded from seed)
  OutputConfig output;
  Slo slo;
  // Autoscaling (sim/driver/autoscaler.h): off unless max_instances > 0; then `instances` holds
  // max_instances slots of which initial_instances are live at time 0.
  AutoscaleConfig autoscale;
  CostConfig cost;
  uint64_t seed = 0;
};

}  // namespace tokenline
