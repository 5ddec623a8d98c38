#include "cli/run_summary.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

namespace tokenline::cli {
namespace {

using Json = nlohmann::ordered_json;

double number_at(const nlohmann::json& j, const char* section, const char* key) {
  if (!j.contains(section) || !j[section].contains(key)) return 0.0;
  return j[section][key].get<double>();
}

double per_gpu(double value, double gpus) {
  return gpus > 0 ? value / gpus : 0.0;
}

Json latency(const nlohmann::json& metrics) {
  Json out = Json::object();
  for (const char* name : {"ttft", "tpot", "itl", "e2e"}) {
    const nlohmann::json& l = metrics.at("latency_ms").at(name);
    out[name] = {{"mean", l.at("mean")}, {"p50", l.at("p50")}, {"p90", l.at("p90")}, {"p99", l.at("p99")}};
  }
  return out;
}

Json goodput(const nlohmann::json& metrics) {
  if (!metrics.contains("goodput")) return nullptr;
  const nlohmann::json& g = metrics["goodput"];
  return {{"slo_ttft_ms", g.at("slo_ttft_ms")},
          {"slo_tpot_ms", g.at("slo_tpot_ms")},
          {"requests_per_s", g.at("requests_per_s")},
          {"fraction_of_completed", g.at("fraction_of_completed")}};
}

std::string format(const char* fmt, double a) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, a);
  return text;
}

// Latencies: three significant figures, never exponent notation (a 55 s TTFT reads 55000).
std::string ms(double v) {
  return format(v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

std::string rate(double v) {
  return format(v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

}  // namespace

Json summary_json(const nlohmann::json& metrics, const SummaryContext& c) {
  const nlohmann::json& run = metrics.at("run");
  const nlohmann::json& requests = metrics.at("requests");
  const double rps = number_at(metrics, "throughput", "requests_per_s");
  const double out_tps = number_at(metrics, "throughput", "output_tokens_per_s");
  const double in_tps = number_at(metrics, "throughput", "input_tokens_per_s");
  // Per GPU: an autoscaled fleet's GPUs are those provisioned on average over the run (its GPU-hours over
  // the simulated time), not every slot up to --max-instances / --pd-max.
  double gpus = c.gpus;
  const double simulated_s = run.value("simulated_s", 0.0);
  if (metrics.contains("autoscaling") && simulated_s > 0)
    gpus = metrics["autoscaling"].value("gpu_hours", 0.0) * 3600.0 / simulated_s;
  Json s;
  s["command"] = c.command;
  s["model"] = run.value("model", "");
  s["hardware"] = run.value("hardware", "");
  s["gpus"] = c.gpus;
  if (metrics.contains("autoscaling")) s["gpus_mean"] = gpus;
  s["parallelism"] = run.value("parallelism", "");
  s["instances"] = run.value("instances", 1);
  s["workload"] = run.value("workload", "");
  s["requests"] = {
      {"arrived", requests.at("arrived")},        {"completed", requests.at("completed")},
      {"rejected", requests.at("rejected")},      {"in_flight_at_end", requests.at("in_flight_at_end")},
      {"warmup", requests.value("warmup", 0)},    {"preemptions", requests.at("preemptions")},
      {"retractions", requests.at("retractions")}};
  s["duration_s"] = number_at(metrics, "throughput", "span_s");
  s["throughput"] = {{"requests_per_s", rps},
                     {"requests_per_s_per_gpu", per_gpu(rps, gpus)},
                     {"output_tokens_per_s", out_tps},
                     {"output_tokens_per_s_per_gpu", per_gpu(out_tps, gpus)},
                     {"input_tokens_per_s", in_tps}};
  s["latency_ms"] = latency(metrics);
  s["goodput"] = goodput(metrics);
  const double capacity = number_at(metrics, "kv_pages", "capacity");
  const double peak = number_at(metrics, "kv_pages", "peak");
  s["kv_pages"] = {
      {"peak", peak}, {"capacity", capacity}, {"peak_fraction", capacity > 0 ? peak / capacity : 0}};
  s["prefix_hit_rate"] = number_at(metrics, "prefix_cache", "hit_rate");
  s["time_source"] = c.time_source;
  s["accuracy"] = c.accuracy;
  s["defaults"] = c.defaults;
  Json load = metrics.contains("load") ? Json(metrics["load"]) : Json::object();
  if (c.offered_rate_rps > 0) load["asked_requests_per_s"] = c.offered_rate_rps;
  if (c.native_rate_rps > 0) load["trace_native_requests_per_s"] = c.native_rate_rps;
  s["load"] = load;
  if (metrics.contains("cost")) s["cost"] = metrics["cost"];              // docs/cost.md
  if (metrics.contains("kv_tiers")) s["kv_tiers"] = metrics["kv_tiers"];  // docs/kv-tiers.md
  if (metrics.contains("autoscaling")) {                                  // docs/autoscaling.md
    const Json& a = metrics["autoscaling"];
    s["autoscaling"] = Json::object();
    for (const char* key : {"instances_peak", "instances_mean", "scale_ups", "scale_downs", "cold_starts",
                            "drains", "gpu_hours"})
      if (a.contains(key)) s["autoscaling"][key] = a[key];
    for (const char* pool : {"prefill", "decode"}) {  // autoscaled PD pools
      if (!a.contains(pool)) continue;
      s["autoscaling"][pool] = {{"instances_peak", a[pool]["instances_peak"]},
                                {"instances_mean", a[pool]["instances_mean"]}};
    }
  }
  return s;
}

std::string summary_table(const Json& s) {
  std::ostringstream o;
  const Json& r = s["requests"];
  const Json& t = s["throughput"];
  const int gpus = s["gpus"].get<int>();
  std::string on = gpus > 0 ? std::to_string(gpus) + " x " : std::string();
  if (gpus > 0 && s.contains("gpus_mean"))  // autoscaled: the mean provisioned, of the slots' most
    on = format("%.2f", s["gpus_mean"].get<double>()) + " (mean; at most " + std::to_string(gpus) + ") x ";
  o << "tokenline " << s["command"].get<std::string>() << ": " << s["model"].get<std::string>() << " on "
    << on << s["hardware"].get<std::string>() << ", " << s["parallelism"].get<std::string>() << "\n";
  o << "  workload      " << s["workload"].get<std::string>() << "\n";
  const Json& load = s["load"];
  if (load.contains("offered_requests_per_s") && load["offered_requests_per_s"].get<double>() > 0) {
    o << "  load          offered " << rate(load["offered_requests_per_s"].get<double>()) << " req/s";
    if (load.contains("trace_native_requests_per_s"))
      o << " (the workload's own rate " << rate(load["trace_native_requests_per_s"].get<double>())
        << " req/s, rescaled by --rate)";
    o << ", sustained " << rate(load["sustained_requests_per_s"].get<double>()) << " req/s\n";
  }
  o << "  requests      " << r["completed"].get<int64_t>() << " completed, " << r["rejected"].get<int64_t>()
    << " rejected, " << r["in_flight_at_end"].get<int64_t>() << " in flight at the end";
  if (r["warmup"].get<int64_t>() > 0) o << ", " << r["warmup"].get<int64_t>() << " warm-up (left out below)";
  o << "; " << r["preemptions"].get<int64_t>() << " preemptions, " << r["retractions"].get<int64_t>()
    << " retractions\n";
  o << "  duration      " << format("%.2f", s["duration_s"].get<double>())
    << " s (first arrival to last finish)\n";
  o << "  throughput    " << rate(t["requests_per_s"].get<double>()) << " req/s";
  if (gpus > 0) o << " (" << rate(t["requests_per_s_per_gpu"].get<double>()) << " per GPU)";
  o << ", output " << rate(t["output_tokens_per_s"].get<double>()) << " tok/s";
  if (gpus > 0) o << " (" << rate(t["output_tokens_per_s_per_gpu"].get<double>()) << " per GPU)";
  o << ", input " << rate(t["input_tokens_per_s"].get<double>()) << " tok/s\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-12s %10s %10s %10s %10s\n", "latency ms", "mean", "p50", "p90",
                "p99");
  o << line;
  for (const auto& [name, label] : {std::pair{"ttft", "  TTFT"}, std::pair{"tpot", "  TPOT"},
                                    std::pair{"itl", "  ITL"}, std::pair{"e2e", "  E2E"}}) {
    const Json& l = s["latency_ms"][name];
    std::snprintf(line, sizeof line, "  %-12s %10s %10s %10s %10s\n", label,
                  ms(l["mean"].get<double>()).c_str(), ms(l["p50"].get<double>()).c_str(),
                  ms(l["p90"].get<double>()).c_str(), ms(l["p99"].get<double>()).c_str());
    o << line;
  }
  const Json& g = s["goodput"];
  if (g.is_null()) {
    o << "  goodput       no --slo given\n";
  } else {
    o << "  goodput       " << rate(g["requests_per_s"].get<double>()) << " req/s ("
      << format("%.1f", 100 * g["fraction_of_completed"].get<double>()) << "% of completed) under";
    if (g["slo_ttft_ms"].get<double>() > 0) o << " TTFT <= " << ms(g["slo_ttft_ms"].get<double>()) << " ms";
    if (g["slo_tpot_ms"].get<double>() > 0) o << " TPOT <= " << ms(g["slo_tpot_ms"].get<double>()) << " ms";
    o << "\n";
  }
  const Json& kv = s["kv_pages"];
  o << "  KV cache      peak " << format("%.0f", kv["peak"].get<double>()) << " of "
    << format("%.0f", kv["capacity"].get<double>()) << " pages ("
    << format("%.1f", 100 * kv["peak_fraction"].get<double>()) << "%), prefix hit "
    << format("%.1f", 100 * s["prefix_hit_rate"].get<double>()) << "%\n";
  if (s.contains("kv_tiers")) {
    const Json& k = s["kv_tiers"];
    o << "  KV host tier  hit " << format("%.1f", 100 * k.value("host_hit_rate", 0.0))
      << "% of looked-up tokens (" << format("%.1f", 100 * k.value("hit_rate", 0.0)) << "% with HBM); "
      << format("%.1f", k.value("bytes_host_to_hbm", 0.0) / 1e9) << " GB loaded back, "
      << format("%.1f", k.value("bytes_hbm_to_host", 0.0) / 1e9) << " GB written; stalls "
      << format("%.3f", k.value("stall_s", 0.0)) << " s\n";
  }
  if (s.contains("autoscaling")) {
    const Json& a = s["autoscaling"];
    o << "  instances     ";
    if (a.contains("prefill")) {
      o << "prefill peak " << a["prefill"].value("instances_peak", int64_t{0}) << ", mean "
        << format("%.2f", a["prefill"].value("instances_mean", 0.0)) << "; decode peak "
        << a["decode"].value("instances_peak", int64_t{0}) << ", mean "
        << format("%.2f", a["decode"].value("instances_mean", 0.0));
    } else {
      o << "peak " << a.value("instances_peak", int64_t{0}) << ", mean "
        << format("%.2f", a.value("instances_mean", 0.0));
    }
    o << "; " << a.value("scale_ups", int64_t{0}) << " scale-ups, " << a.value("scale_downs", int64_t{0})
      << " scale-downs, " << a.value("cold_starts", int64_t{0}) << " cold starts; "
      << format("%.3f", a.value("gpu_hours", 0.0)) << " GPU-hours\n";
  }
  if (s.contains("cost"))
    o << "  cost          $" << format("%.2f", s["cost"]["usd_total"].get<double>()) << " for "
      << format("%.3f", s["cost"]["gpu_hours"].get<double>()) << " GPU-hours at $"
      << format("%.2f", s["cost"]["usd_per_gpu_hour"].get<double>()) << "/GPU-hour: $"
      << format("%.3f", s["cost"]["usd_per_million_output_tokens"].is_number()
                            ? s["cost"]["usd_per_million_output_tokens"].get<double>()
                            : 0.0)
      << " per million output tokens\n";
  if (!s["time_source"].get<std::string>().empty())
    o << "  step times    " << s["time_source"].get<std::string>() << "\n";
  if (s.contains("accuracy"))
    for (size_t i = 0; i < s["accuracy"].size(); ++i)
      o << (i == 0 ? "  accuracy      " : "                ") << s["accuracy"][i].get<std::string>() << "\n";
  for (size_t i = 0; i < s["defaults"].size(); ++i)
    o << (i == 0 ? "  defaults      " : "                ") << s["defaults"][i].get<std::string>() << "\n";
  return o.str();
}

std::string overload_warning(const Json& s) {
  const Json& load = s["load"];
  if (!load.value("saturated", false)) return "";
  const Json& q = load["ttft_mean_ms_by_arrival_quarter"];
  std::string grew = "mean TTFT " + ms(q[0].get<double>()) + " ms for the first quarter of arrivals, " +
                     ms(q[3].get<double>()) + " ms for the last";
  if (load.contains("requests_in_system_by_arrival_quarter")) {
    const Json& n = load["requests_in_system_by_arrival_quarter"];
    grew += "; " + format("%.0f", n[0].get<double>()) + " requests in the system at the end of the first, " +
            format("%.0f", n[3].get<double>()) + " at the end of the last";
  }
  return "overloaded: offered " + rate(load["offered_requests_per_s"].get<double>()) + " req/s, sustained " +
         rate(load["sustained_requests_per_s"].get<double>()) +
         " req/s; requests piled up through the run, waiting or in a slowing batch (" + grew +
         "). Latencies depend on the run's length; lower --rate or add GPUs.";
}

bool print_run_summary(const std::string& out_dir, const SummaryContext& c) {
  const std::string path = out_dir + "/metrics.json";
  std::ifstream in(path);
  nlohmann::json metrics = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!in.is_open() || metrics.is_discarded()) {
    std::fprintf(stderr, "tokenline %s: could not read back %s for the summary\n", c.command.c_str(),
                 path.c_str());
    return false;
  }
  const Json s = summary_json(metrics, c);
  if (c.json) {
    std::fputs((s.dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(summary_table(s).c_str(), stdout);
  }
  std::fflush(stdout);
  const std::string warning = overload_warning(s);
  if (!warning.empty())
    std::fprintf(stderr, "tokenline %s: warning: %s\n", c.command.c_str(), warning.c_str());
  return true;
}

}  // namespace tokenline::cli
