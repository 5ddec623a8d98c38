#include "cli/scale_options.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>

#include "common/input_error.h"
#include "common/number_text.h"
#include "topologies/gpu_price.h"

namespace tokenline::cli {
namespace {

constexpr double kBytesPerGb = 1e9;

ScaleMetric parse_metric(const std::string& v) {
  if (v == "queue") return ScaleMetric::kQueue;
  if (v == "concurrency") return ScaleMetric::kConcurrency;
  if (v == "kv") return ScaleMetric::kKv;
  if (v == "slo") return ScaleMetric::kSlo;
  throw InputError("--autoscale", "queue, concurrency, kv or slo", "'" + v + "'");
}

void require_seconds(double v, const char* option, bool positive) {
  if (!std::isfinite(v) || v < 0 || (positive && v == 0))
    throw InputError(option, positive ? "seconds > 0" : "seconds >= 0", number_text(v));
}

}  // namespace

void add_scale_options(CLI::App& cmd, ScaleOptions& o) {
  cmd.add_option("--gpu-price", o.gpu_price,
                 "metrics.json's cost block at USD per GPU-hour, or 'list': the hardware's list price "
                 "(topologies/hardware/*.json, source and date there)");
  cmd.add_option("--max-instances", o.max_instances,
                 "autoscale between --min-instances and this many instances (HPA maxReplicas); "
                 "--instances is the count at the start");
  cmd.add_option("--min-instances", o.min_instances, "autoscaling: fewest instances (HPA minReplicas)")
      ->capture_default_str();
  cmd.add_option("--autoscale", o.metric,
                 "autoscaling metric over the window: queue (waiting requests per instance), concurrency "
                 "(requests in an instance), kv (KV use fraction), slo (SLO attainment)")
      ->capture_default_str();
  cmd.add_option("--autoscale-target", o.target,
                 "the metric's target per instance (slo: the attainment to keep, e.g. 0.95)");
  cmd.add_option("--autoscale-interval", o.interval_s,
                 "seconds between scaling decisions (HPA --horizontal-pod-autoscaler-sync-period)")
      ->capture_default_str();
  cmd.add_option("--autoscale-window", o.window_s,
                 "seconds the metric is averaged over (Knative KPA stable-window)")
      ->capture_default_str();
  cmd.add_option(
         "--autoscale-tolerance", o.tolerance,
         "no change while metric / target is within 1 +- this (HPA --horizontal-pod-autoscaler-tolerance)")
      ->capture_default_str();
  cmd.add_option("--scale-up-stabilization", o.scale_up_stabilization_s,
                 "seconds: scale up only to the lowest recommendation of this window (HPA scaleUp "
                 "stabilizationWindowSeconds)")
      ->capture_default_str();
  cmd.add_option("--scale-down-stabilization", o.scale_down_stabilization_s,
                 "seconds: scale down only to the highest recommendation of this window (HPA "
                 "--horizontal-pod-autoscaler-downscale-stabilization)")
      ->capture_default_str();
  cmd.add_option("--storage-gb-per-s", o.storage_gb_per_s,
                 "cold start: GB/s each GPU loads its weights at (default: its NICs' bandwidth)");
  cmd.add_option("--engine-start-s", o.engine_start_s,
                 "cold start: engine start-up seconds after the weights (default 39, vLLM's torch.compile)");
  cmd.add_option("--cold-start-s", o.cold_start_s,
                 "cold start: the whole delay in seconds before a new instance takes requests (replaces the "
                 "weights + engine start estimate)");
}

void check_scale_options(const ScaleOptions& o, int32_t initial_instances, bool slo) {
  if (!o.gpu_price.empty() && o.gpu_price != "list") {
    char* end = nullptr;
    const double v = std::strtod(o.gpu_price.c_str(), &end);
    if (end == o.gpu_price.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0)
      throw InputError("--gpu-price", "USD per GPU-hour > 0, or 'list'", "'" + o.gpu_price + "'");
  }
  if (!o.autoscaled()) {
    if (o.max_instances < 0)
      throw InputError("--max-instances", "a positive count (0: no autoscaling)",
                       std::to_string(o.max_instances));
    if (o.target != 0 || o.min_instances != 1 || o.cold_start_s >= 0 || o.engine_start_s >= 0 ||
        o.storage_gb_per_s != 0)
      throw InputError("--autoscale-target / --min-instances / cold start flags", "--max-instances with them",
                       "no --max-instances");
    return;
  }
  if (o.min_instances < 1 || o.min_instances > o.max_instances)
    throw InputError("--min-instances", "1 to --max-instances (" + std::to_string(o.max_instances) + ")",
                     std::to_string(o.min_instances));
  if (initial_instances < o.min_instances || initial_instances > o.max_instances)
    throw InputError("--instances",
                     "the starting count, within --min-instances " + std::to_string(o.min_instances) +
                         " and --max-instances " + std::to_string(o.max_instances),
                     std::to_string(initial_instances));
  const ScaleMetric metric = parse_metric(o.metric);
  if (metric == ScaleMetric::kSlo) {
    if (!slo) throw InputError("--autoscale slo", "an --slo to attain", "none");
    if (!(o.target > 0 && o.target < 1))
      throw InputError("--autoscale-target", "an SLO attainment in (0, 1) with --autoscale slo",
                       number_text(o.target));
  } else if (!(o.target > 0) || !std::isfinite(o.target)) {
    throw InputError("--autoscale-target", "a target > 0 for --autoscale " + o.metric, number_text(o.target));
  }
  if (metric == ScaleMetric::kKv && o.target > 1)
    throw InputError("--autoscale-target", "a KV use fraction in (0, 1] with --autoscale kv",
                     number_text(o.target));
  require_seconds(o.interval_s, "--autoscale-interval", true);
  require_seconds(o.window_s, "--autoscale-window", true);
  if (o.window_s < o.interval_s)
    throw InputError("--autoscale-window",
                     "at least --autoscale-interval (" + number_text(o.interval_s) + " s)",
                     number_text(o.window_s));
  if (!(o.tolerance >= 0 && o.tolerance < 1))
    throw InputError("--autoscale-tolerance", "a fraction in [0, 1)", number_text(o.tolerance));
  require_seconds(o.scale_up_stabilization_s, "--scale-up-stabilization", false);
  require_seconds(o.scale_down_stabilization_s, "--scale-down-stabilization", false);
  if (o.storage_gb_per_s < 0 || !std::isfinite(o.storage_gb_per_s))
    throw InputError("--storage-gb-per-s", "GB/s > 0 (0: the GPU's NICs)", number_text(o.storage_gb_per_s));
  if (o.engine_start_s != -1) require_seconds(o.engine_start_s, "--engine-start-s", false);
  if (o.cold_start_s != -1) require_seconds(o.cold_start_s, "--cold-start-s", false);
}

CostConfig cost_config(const ScaleOptions& o, const std::string& hardware) {
  CostConfig c;
  if (o.gpu_price.empty()) return c;
  if (o.gpu_price != "list") {
    c.usd_per_gpu_hour = std::strtod(o.gpu_price.c_str(), nullptr);
    c.price_source = "--gpu-price";
    return c;
  }
  const GpuPrice price = load_gpu_price(hardware);
  if (price.usd_per_gpu_hour <= 0)
    throw InputError("--gpu-price list", "a hardware JSON with a \"price\" block (or --gpu-price USD)",
                     hardware + " lists no price");
  c.usd_per_gpu_hour = price.usd_per_gpu_hour;
  c.price_source = price.source + " (" + price.date + ")";
  return c;
}

AutoscaleConfig autoscale_config(const ScaleOptions& o, int32_t initial_instances,
                                 double weight_bytes_per_gpu, double nic_bytes_per_s) {
  AutoscaleConfig a;
  a.max_instances = o.max_instances;
  a.min_instances = o.min_instances;
  a.initial_instances = initial_instances;
  a.metric = parse_metric(o.metric);
  a.target = o.target;
  a.interval_s = o.interval_s;
  a.window_s = o.window_s;
  a.tolerance = o.tolerance;
  a.scale_up_stabilization_s = o.scale_up_stabilization_s;
  a.scale_down_stabilization_s = o.scale_down_stabilization_s;
  if (o.cold_start_s >= 0) {  // the whole delay as given: no split to show
    a.engine_start_s = o.cold_start_s;
    return a;
  }
  const double link = o.storage_gb_per_s > 0 ? o.storage_gb_per_s * kBytesPerGb : nic_bytes_per_s;
  a.weights_load_s = link > 0 ? weight_bytes_per_gpu / link : 0.0;
  a.engine_start_s = o.engine_start_s >= 0 ? o.engine_start_s : kEngineStartS;
  return a;
}

}  // namespace tokenline::cli
