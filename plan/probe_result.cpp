#include "plan/probe_result.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

constexpr double kFailedRatio = 1e9;      // a run that wrote no metrics sorts after every real one
constexpr double kIncompleteRatio = 2.0;  // lost requests: at least twice the SLO, whatever the latencies

}  // namespace

ProbeResult parse_probe_metrics(const std::string& metrics_json, int32_t exit_code) {
  const nlohmann::json j = nlohmann::json::parse(metrics_json);
  ProbeResult p;
  p.exit_code = exit_code;
  const nlohmann::json& req = j.at("requests");
  p.completed = req.at("completed").get<int64_t>();
  p.rejected = req.at("rejected").get<int64_t>();
  p.in_flight = req.at("in_flight_at_end").get<int64_t>();
  const nlohmann::json& ttft = j.at("latency_ms").at("ttft");
  const nlohmann::json& tpot = j.at("latency_ms").at("tpot");
  p.ttft_p50_ms = ttft.at("p50").get<double>();
  p.ttft_p90_ms = ttft.at("p90").get<double>();
  p.ttft_p99_ms = ttft.at("p99").get<double>();
  p.tpot_mean_ms = tpot.at("mean").get<double>();
  p.tpot_p50_ms = tpot.at("p50").get<double>();
  p.tpot_p90_ms = tpot.at("p90").get<double>();
  p.tpot_p99_ms = tpot.at("p99").get<double>();
  p.output_tokens_per_s = j.at("throughput").at("output_tokens_per_s").get<double>();
  p.requests_per_s = j.at("throughput").at("requests_per_s").get<double>();
  if (j.contains("goodput")) p.goodput_requests_per_s = j.at("goodput").at("requests_per_s").get<double>();
  return p;
}

bool meets_slo(const ProbeResult& p, const Slo& slo) {
  return slo_ratio(p, slo) <= 1.0;
}

double slo_ratio(const ProbeResult& p, const Slo& slo) {
  if (p.exit_code != 0 || p.completed == 0) return kFailedRatio;
  double ratio = 0;
  if (slo.ttft_s > 0) ratio = std::max(ratio, p.ttft_p90_ms / (slo.ttft_s * 1e3));
  if (slo.tpot_s > 0) ratio = std::max(ratio, p.tpot_p90_ms / (slo.tpot_s * 1e3));
  if (p.rejected > 0 || p.in_flight > 0) ratio = std::max(ratio, kIncompleteRatio);
  return ratio;
}

}  // namespace tokenline
