// The cost and autoscaling options of `tokenline sim` (docs/cost.md, docs/autoscaling.md) as given on the
// command line, and their validation into SimConfig's CostConfig and AutoscaleConfig. The autoscaling flags
// are named after the Kubernetes HPA's, with its defaults (sim/driver/autoscaler.h gives each source).
#pragma once

#include <cstdint>
#include <string>

#include "sim/driver/sim_config.h"

namespace CLI {
class App;
}

namespace tokenline::cli {

struct ScaleOptions {
  std::string gpu_price;      // "": no cost block; "list": the hardware's list price; else USD per GPU-hour
  int32_t max_instances = 0;  // > 0: autoscaling, up to this many instances
  int32_t min_instances = 1;
  std::string metric;  // queue | concurrency | kv | slo; "": queue (not given: --pd-max refuses any)
  double target = 0;
  double interval_s = 15;
  double window_s = 60;
  double tolerance = 0.1;
  double scale_up_stabilization_s = 0;
  double scale_down_stabilization_s = 300;
  double storage_gb_per_s = 0;  // the weights' link at a cold start, GB/s per GPU; 0: the GPU's NICs
  double engine_start_s = -1;   // -1: kEngineStartS
  double cold_start_s = -1;     // -1: weights / link + engine start; else the whole cold start
  // Autoscaled PD pools (--pd-max xPyD): each pool between --pd-min and --pd-max, the prefill pool by its
  // queue, the decode pool by its KV use, each with its target (docs/autoscaling.md "PD").
  std::string pd_max;
  std::string pd_min = "1P1D";
  double prefill_target = 0;
  double decode_target = 0;
  bool autoscaled() const { return max_instances > 0; }
  bool pd_autoscaled() const { return !pd_max.empty(); }
};

// An autoscaled PD run's bounds: each pool's fewest and most instances.
struct PdScaleBounds {
  int32_t min_prefill = 1, min_decode = 1, max_prefill = 1, max_decode = 1;
};

// A vLLM engine's start-up besides loading weights: its torch.compile phase, measured at ~39 s on a cold
// start (route179.dev, "Optimizing vLLM cold start with model streaming and compile caching", 2026-06-30:
// loading weights ~142 s, torch.compile ~39 s, then profiling and warm-up). Profiling, warm-up and CUDA
// graph capture are not in it: the default is a lower bound.
constexpr double kEngineStartS = 39.0;

void add_scale_options(CLI::App& cmd, ScaleOptions& options);

// Judges every flag before anything runs; throws InputError naming the flag. `initial_instances`: the
// --instances the run starts with; `slo`: whether an --slo was given.
void check_scale_options(const ScaleOptions& options, int32_t initial_instances, bool slo);

// REQUIRES: check_scale_options passed and options.pd_autoscaled(). Judges --pd-min / --pd-max against the
// starting --pd counts; throws InputError naming the flag.
PdScaleBounds pd_scale_bounds(const ScaleOptions& options, int32_t prefill, int32_t decode);

// The cost block's price: --gpu-price USD; 'list', the hardware's list price (InputError when it lists none);
// 'none', no cost block; without --gpu-price the list price where the hardware lists one, with the line a run
// lists among its defaults in *defaulted (else no cost block, and *defaulted says the hardware lists none).
// `hardware`: the preset name or JSON path the run's GPUs came from.
CostConfig cost_config(const ScaleOptions& options, const std::string& hardware,
                       std::string* defaulted = nullptr);

// REQUIRES: check_scale_options passed and options.autoscaled(). weight_bytes_per_gpu: what each GPU loads;
// nic_bytes_per_s: the GPU's NIC bandwidth, the default storage link.
AutoscaleConfig autoscale_config(const ScaleOptions& options, int32_t initial_instances,
                                 double weight_bytes_per_gpu, double nic_bytes_per_s);
// One PD pool's policy (REQUIRES: options.pd_autoscaled()): the prefill pool's metric is its queue with
// --autoscale-prefill-target, the decode pool's its KV use with --autoscale-decode-target; the other
// settings and the cold start as autoscale_config's.
AutoscaleConfig pd_autoscale_config(const ScaleOptions& options, const PdScaleBounds& bounds, bool prefill,
                                    int32_t initial_instances, double weight_bytes_per_gpu,
                                    double nic_bytes_per_s);

}  // namespace tokenline::cli
