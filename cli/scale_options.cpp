#include "cli/scale_options.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "topologies/gpu_price.h"

namespace tokenline::cli {
namespace {

constexpr double kBytesPerGb = 1e9;

ScaleMetric parse_metric(const std::string& v) {
  if (v == "queue" || v.empty()) return ScaleMetric::kQueue;
  if (v == "concurrency") return ScaleMetric::kConcurrency;
  if (v == "kv") return ScaleMetric::kKv;
  if (v == "slo") return ScaleMetric::kSlo;
  throw InputError("--autoscale", "queue, concurrency, kv or slo", "'" + v + "'");
}

void require_seconds(double v, const char* option, bool positive) {
  if (!std::isfinite(v) || v < 0 || (positive && v == 0))
    throw InputError(option, positive ? "seconds > 0" : "seconds >= 0", number_text(v));
}

// "xPyD" as prefill and decode counts, each >= 1; throws InputError naming `flag`.
std::pair<int32_t, int32_t> parse_pd_counts(const std::string& v, const char* flag) {
  const size_t p = v.find_first_of("Pp");
  const size_t d = v.find_first_of("Dd");
  int32_t prefill = 0, decode = 0;
  bool ok = p != std::string::npos && d == v.size() - 1 && p < d && p > 0 && d > p + 1;
  if (ok) {
    const std::string a = v.substr(0, p), b = v.substr(p + 1, d - p - 1);
    char* end = nullptr;
    const long x = std::strtol(a.c_str(), &end, 10);
    ok = *end == '\0' && a.find_first_not_of("0123456789") == std::string::npos;
    const long y = std::strtol(b.c_str(), &end, 10);
    ok = ok && *end == '\0' && b.find_first_not_of("0123456789") == std::string::npos && x >= 1 && y >= 1 &&
         x <= limits::kMaxInstances && y <= limits::kMaxInstances;
    prefill = static_cast<int32_t>(x);
    decode = static_cast<int32_t>(y);
  }
  if (!ok)
    throw InputError(flag, "xPyD with 1 <= x, y <= " + std::to_string(limits::kMaxInstances) + " (e.g. 2P4D)",
                     "'" + v + "'");
  return {prefill, decode};
}

// The settings both a co-located fleet and PD pools take: the sync, window, tolerance, stabilisation and
// cold start.
void check_timing(const ScaleOptions& o) {
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

// --pd-max: the pools' metrics are fixed (prefill queue, decode KV), each with its own target; the
// co-located fleet's flags are refused.
void check_pd_options(const ScaleOptions& o) {
  if (o.max_instances != 0)
    throw InputError("--max-instances", "no --max-instances with --pd-max (each pool's bounds are xPyD)",
                     std::to_string(o.max_instances));
  if (!o.metric.empty())
    throw InputError("--autoscale",
                     "no --autoscale with --pd-max (the prefill pool scales by its queue, the decode pool by "
                     "its KV use)",
                     o.metric);
  if (o.target != 0)
    throw InputError("--autoscale-target",
                     "--autoscale-prefill-target and --autoscale-decode-target with --pd-max",
                     number_text(o.target));
  if (o.min_instances != 1)
    throw InputError("--min-instances", "--pd-min xPyD with --pd-max", std::to_string(o.min_instances));
  if (!(o.prefill_target > 0) || !std::isfinite(o.prefill_target))
    throw InputError("--autoscale-prefill-target", "waiting requests per prefill instance > 0",
                     number_text(o.prefill_target));
  if (!(o.decode_target > 0 && o.decode_target <= 1))
    throw InputError("--autoscale-decode-target", "a KV use fraction in (0, 1]",
                     number_text(o.decode_target));
  check_timing(o);
}

}  // namespace

void add_scale_options(CLI::App& cmd, ScaleOptions& o) {
  cmd.add_option("--gpu-price", o.gpu_price,
                 "metrics.json's cost block at USD per GPU-hour; 'list': the hardware's list price "
                 "(topologies/hardware/*.json, source and date there), the default where it lists one; "
                 "'none': no cost block");
  cmd.add_option("--max-instances", o.max_instances,
                 "autoscale between --min-instances and this many instances (HPA maxReplicas); "
                 "--instances is the count at the start");
  cmd.add_option("--min-instances", o.min_instances, "autoscaling: fewest instances (HPA minReplicas)")
      ->capture_default_str();
  cmd.add_option("--autoscale", o.metric,
                 "autoscaling metric over the window: queue (waiting requests per instance; the default), "
                 "concurrency (requests in an instance), kv (KV use fraction), slo (SLO attainment)");
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
  cmd.add_option("--pd-max", o.pd_max,
                 "with --pd: autoscale the prefill and decode pools up to xPyD instances (--pd: the start)");
  cmd.add_option("--pd-min", o.pd_min, "with --pd-max: each pool's fewest instances, as xPyD")
      ->capture_default_str();
  cmd.add_option(
      "--autoscale-prefill-target", o.prefill_target,
      "with --pd-max: waiting requests per prefill instance to keep (Dynamo planner: prefill queue)");
  cmd.add_option("--autoscale-decode-target", o.decode_target,
                 "with --pd-max: KV use fraction of the decode instances to keep, (0, 1] (Dynamo planner: "
                 "decode KV utilisation)");
  cmd.add_option("--storage-gb-per-s", o.storage_gb_per_s,
                 "cold start: GB/s each GPU loads its weights at (default: its NICs' bandwidth)");
  cmd.add_option("--engine-start-s", o.engine_start_s,
                 "cold start: engine start-up seconds after the weights (default 39, vLLM's torch.compile)");
  cmd.add_option("--cold-start-s", o.cold_start_s,
                 "cold start: the whole delay in seconds before a new instance takes requests (replaces the "
                 "weights + engine start estimate)");
}

void check_scale_options(const ScaleOptions& o, int32_t initial_instances, bool slo) {
  if (!o.gpu_price.empty() && o.gpu_price != "list" && o.gpu_price != "none") {
    char* end = nullptr;
    const double v = std::strtod(o.gpu_price.c_str(), &end);
    if (end == o.gpu_price.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0)
      throw InputError("--gpu-price", "USD per GPU-hour > 0, 'list' or 'none'", "'" + o.gpu_price + "'");
  }
  if (o.pd_autoscaled()) {
    check_pd_options(o);
    return;
  }
  if (o.prefill_target != 0 || o.decode_target != 0 || o.pd_min != "1P1D")
    throw InputError("--autoscale-prefill-target / --autoscale-decode-target / --pd-min",
                     "--pd-max with them", "no --pd-max");
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
    throw InputError("--autoscale-target",
                     "a target > 0 for --autoscale " + (o.metric.empty() ? std::string("queue") : o.metric),
                     number_text(o.target));
  }
  if (metric == ScaleMetric::kKv && o.target > 1)
    throw InputError("--autoscale-target", "a KV use fraction in (0, 1] with --autoscale kv",
                     number_text(o.target));
  check_timing(o);
}

CostConfig cost_config(const ScaleOptions& o, const std::string& hardware, std::string* defaulted) {
  CostConfig c;
  if (o.gpu_price == "none") return c;
  if (!o.gpu_price.empty() && o.gpu_price != "list") {
    c.usd_per_gpu_hour = std::strtod(o.gpu_price.c_str(), nullptr);
    c.price_source = "--gpu-price";
    return c;
  }
  const GpuPrice price = load_gpu_price(hardware);
  if (o.gpu_price.empty()) {  // the default: the list price where the hardware lists one, else no cost block
    if (price.usd_per_gpu_hour <= 0) {  // say why the summary has no cost line
      if (defaulted != nullptr)
        *defaulted =
            "no GPU price: " + hardware + " lists none (docs/cost.md); --gpu-price USD prices the run";
      return c;
    }
    if (defaulted != nullptr) {
      char usd[32];
      std::snprintf(usd, sizeof usd, "%.2f", price.usd_per_gpu_hour);
      *defaulted = "GPU price $" + std::string(usd) + "/GPU-hour, " + hardware + "'s list price of " +
                   price.date + " (no --gpu-price; give yours, or 'none')";
    }
  } else if (price.usd_per_gpu_hour <= 0) {
    throw InputError("--gpu-price list", "a hardware JSON with a \"price\" block (or --gpu-price USD)",
                     hardware + " lists no price");
  }
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

PdScaleBounds pd_scale_bounds(const ScaleOptions& o, int32_t prefill, int32_t decode) {
  const auto [max_p, max_d] = parse_pd_counts(o.pd_max, "--pd-max");
  const auto [min_p, min_d] = parse_pd_counts(o.pd_min, "--pd-min");
  const std::string start = std::to_string(prefill) + "P" + std::to_string(decode) + "D";
  if (min_p > prefill || min_d > decode)
    throw InputError("--pd-min", "at most --pd " + start + " in each pool", o.pd_min);
  if (max_p < prefill || max_d < decode)
    throw InputError("--pd-max", "at least --pd " + start + " in each pool", o.pd_max);
  return {.min_prefill = min_p, .min_decode = min_d, .max_prefill = max_p, .max_decode = max_d};
}

AutoscaleConfig pd_autoscale_config(const ScaleOptions& o, const PdScaleBounds& b, bool prefill,
                                    int32_t initial_instances, double weight_bytes_per_gpu,
                                    double nic_bytes_per_s) {
  ScaleOptions pool = o;
  pool.metric = prefill ? "queue" : "kv";
  pool.target = prefill ? o.prefill_target : o.decode_target;
  pool.min_instances = prefill ? b.min_prefill : b.min_decode;
  pool.max_instances = prefill ? b.max_prefill : b.max_decode;
  return autoscale_config(pool, initial_instances, weight_bytes_per_gpu, nic_bytes_per_s);
}

}  // namespace tokenline::cli
