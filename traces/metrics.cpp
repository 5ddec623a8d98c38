#include "traces/metrics.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kRoundTo = 1e9;  // outputs keep nanosecond / 1e-9 resolution: short, stable digits

double rounded(double value) {
  return std::isfinite(value) ? std::round(value * kRoundTo) / kRoundTo : 0.0;
}

Json summary_json(std::vector<double>& values, double unit) {
  const LatencySummary s = summarize(values);
  return Json{{"count", s.count},
              {"mean", rounded(s.mean * unit)},
              {"p50", rounded(s.p50 * unit)},
              {"p90", rounded(s.p90 * unit)},
              {"p99", rounded(s.p99 * unit)},
              {"max", rounded(s.max * unit)}};
}

double per_second(double amount, double span_s) {
  return span_s > 0 ? rounded(amount / span_s) : 0.0;
}

}  // namespace

Metrics::Metrics(int32_t instances, Slo slo)
    : slo_(slo), steps_(static_cast<size_t>(instances), 0), kv_(static_cast<size_t>(instances)) {}

void Metrics::on_request(const RequestRow& r) {
  if (first_arrival_s_ < 0 || r.arrival_s < first_arrival_s_) first_arrival_s_ = r.arrival_s;
  last_finish_s_ = std::max(last_finish_s_, r.finish_s);
  preemptions_ += r.preemptions;
  preempted_requests_ += r.preemptions > 0 ? 1 : 0;
  if (!r.completed) {
    ++rejected_total_;
    ++rejected_[std::string(r.status)];
    return;
  }
  ++completed_;
  input_tokens_ += r.input_tokens;
  output_tokens_ += r.output_tokens;
  cached_tokens_ += r.cached_tokens;
  const double ttft = r.first_token_s - r.arrival_s;
  const double tpot =
      r.output_tokens > 1 ? (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1) : 0.0;
  ttft_s_.push_back(ttft);
  if (r.output_tokens > 1) tpot_s_.push_back(tpot);
  e2e_s_.push_back(r.finish_s - r.arrival_s);
  const bool ttft_ok = slo_.ttft_s <= 0 || ttft <= slo_.ttft_s;
  const bool tpot_ok = slo_.tpot_s <= 0 || tpot <= slo_.tpot_s;
  good_requests_ += ttft_ok && tpot_ok ? 1 : 0;
}

void Metrics::advance(KvTrack& track, double time_s) {
  if (time_s > track.last_time_s) {
    track.page_seconds += static_cast<double>(track.used_pages) * (time_s - track.last_time_s);
    track.last_time_s = time_s;
  }
}

void Metrics::set_kv_capacity(int32_t instance, int64_t pages) {
  kv_[static_cast<size_t>(instance)].capacity_pages = pages;
  kv_total_.capacity_pages = 0;
  for (const KvTrack& k : kv_) kv_total_.capacity_pages += k.capacity_pages;
}

void Metrics::on_kv_pages(int32_t instance, double time_s, int64_t used_pages) {
  KvTrack& k = kv_[static_cast<size_t>(instance)];
  advance(k, time_s);
  advance(kv_total_, time_s);
  kv_total_.used_pages += used_pages - k.used_pages;
  kv_total_.peak_pages = std::max(kv_total_.peak_pages, kv_total_.used_pages);
  k.used_pages = used_pages;
  k.peak_pages = std::max(k.peak_pages, used_pages);
}

std::string Metrics::to_json(const RunInfo& info) {
  const double end_s = info.simulated_s;
  const double span_s = first_arrival_s_ >= 0 ? last_finish_s_ - first_arrival_s_ : 0.0;
  constexpr double kMs = 1e3;  // latencies are reported in milliseconds
  Json rejected = Json::object();
  for (const auto& [reason, count] : rejected_) rejected[reason] = count;

  Json j;
  j["requests"] = {{"arrived", arrived_},
                   {"completed", completed_},
                   {"rejected", rejected_total_},
                   {"rejected_by_reason", rejected},
                   {"in_flight_at_end", arrived_ - completed_ - rejected_total_},
                   {"preempted", preempted_requests_},
                   {"preemptions", preemptions_}};
  j["latency_ms"] = {{"ttft", summary_json(ttft_s_, kMs)},
                     {"tpot", summary_json(tpot_s_, kMs)},
                     {"itl", summary_json(itl_s_, kMs)},
                     {"e2e", summary_json(e2e_s_, kMs)}};
  j["throughput"] = {{"span_s", rounded(span_s)},
                     {"input_tokens_per_s", per_second(static_cast<double>(input_tokens_), span_s)},
                     {"output_tokens_per_s", per_second(static_cast<double>(output_tokens_), span_s)},
                     {"requests_per_s", per_second(static_cast<double>(completed_), span_s)}};
  if (slo_.enabled()) {
    j["goodput"] = {{"slo_ttft_ms", rounded(slo_.ttft_s * kMs)},
                    {"slo_tpot_ms", rounded(slo_.tpot_s * kMs)},
                    {"good_requests", good_requests_},
                    {"requests_per_s", per_second(static_cast<double>(good_requests_), span_s)},
                    {"fraction_of_completed", completed_ > 0 ? rounded(static_cast<double>(good_requests_) /
                                                                       static_cast<double>(completed_))
                                                             : 0.0}};
  }
  j["prefix_cache"] = {{"input_tokens", input_tokens_},
                       {"hit_tokens", cached_tokens_},
                       {"hit_rate", input_tokens_ > 0 ? rounded(static_cast<double>(cached_tokens_) /
                                                                static_cast<double>(input_tokens_))
                                                      : 0.0}};
  for (KvTrack& k : kv_) advance(k, end_s);
  advance(kv_total_, end_s);
  auto kv_json = [&](const KvTrack& k) {
    return Json{{"capacity", k.capacity_pages},
                {"peak", k.peak_pages},
                {"mean", end_s > 0 ? rounded(k.page_seconds / end_s) : 0.0}};
  };
  j["kv_pages"] = kv_json(kv_total_);
  Json instances = Json::array();
  for (size_t i = 0; i < kv_.size(); ++i) {
    instances.push_back({{"index", i}, {"steps", steps_[i]}, {"kv_pages", kv_json(kv_[i])}});
  }
  j["instances"] = instances;
  Json run = {{"mode", info.mode},
              {"backend", info.backend},
              {"model", info.model},
              {"hardware", info.hardware},
              {"parallelism", info.parallelism},
              {"instances", info.instances},
              {"router", info.router},
              {"workload", info.workload},
              {"seed", info.seed},
              {"simulated_s", rounded(info.simulated_s)},
              {"events", info.events},
              {"skipped_lines", info.skipped_lines}};
  if (!info.cluster.empty()) run["cluster"] = info.cluster;
  if (info.wall_s) run["wall_s"] = rounded(*info.wall_s);
  j["run"] = run;
  return j.dump(2) + "\n";
}

}  // namespace tokenline
