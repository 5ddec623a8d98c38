#include "traces/metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kRoundTo = 1e9;  // outputs keep nanosecond / 1e-9 resolution: short, stable digits

double rounded(double value) {
  return std::isfinite(value) ? std::round(value * kRoundTo) / kRoundTo : 0.0;
}

Json summary_json(const LatencyHistogram& values, double unit) {
  const LatencySummary s = values.summary();
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
  preemptions_ += r.preemptions;
  preempted_requests_ += r.preemptions > 0 ? 1 : 0;
  retractions_ += r.retractions;
  retracted_requests_ += r.retractions > 0 ? 1 : 0;
  warmup_requests_ += r.warmup ? 1 : 0;
  if (r.completed) {
    ++completed_;
  } else {
    ++rejected_total_;
    ++rejected_[std::string(r.status)];
  }
  if (r.warmup) return;  // the requests block only: the rest describes the measured phase
  ++measured_requests_;
  if (first_arrival_s_ < 0 || r.arrival_s < first_arrival_s_) first_arrival_s_ = r.arrival_s;
  last_arrival_s_ = std::max(last_arrival_s_, r.arrival_s);
  last_finish_s_ = std::max(last_finish_s_, r.finish_s);
  if (!r.completed) return;
  input_tokens_ += r.input_tokens;
  output_tokens_ += r.generated_tokens;
  cached_tokens_ += r.cached_tokens;
  ++measured_completed_;
  const double ttft = r.first_token_s - r.arrival_s;
  const double tpot = request_tpot_s(r.first_token_s, r.finish_s, r.generated_tokens);
  ttft_s_.add(ttft);
  if (r.generated_tokens > 1) tpot_s_.add(tpot);
  e2e_s_.add(r.finish_s - r.arrival_s);
  add_load(r.arrival_s, ttft, r.finish_s);
  const bool ttft_ok = slo_.ttft_s <= 0 || ttft <= slo_.ttft_s;
  const bool tpot_ok = slo_.tpot_s <= 0 || tpot <= slo_.tpot_s;
  good_requests_ += ttft_ok && tpot_ok ? 1 : 0;
}

void Metrics::add_load(double arrival_s, double ttft_s, double finish_s) {
  const double at_s = std::max(arrival_s, 0.0);
  while (at_s >= load_bin_s_ * static_cast<double>(kLoadBins)) {  // finite: arrivals are bounded
    for (size_t i = 0; i < kLoadBins / 2; ++i) {
      load_[i] = LoadBin{.requests = load_[2 * i].requests + load_[2 * i + 1].requests,
                         .ttft_s = load_[2 * i].ttft_s + load_[2 * i + 1].ttft_s};
    }
    std::fill(load_.begin() + kLoadBins / 2, load_.end(), LoadBin{});
    load_bin_s_ *= 2;
  }
  LoadBin& bin = load_[static_cast<size_t>(at_s / load_bin_s_)];
  ++bin.requests;
  bin.ttft_s += ttft_s;
  const double end_s = std::max(finish_s, 0.0);
  while (end_s >= finished_bin_s_ * static_cast<double>(kLoadBins)) {  // finite: finishes are bounded
    for (size_t i = 0; i < kLoadBins / 2; ++i) finished_[i] = finished_[2 * i] + finished_[2 * i + 1];
    std::fill(finished_.begin() + kLoadBins / 2, finished_.end(), 0);
    finished_bin_s_ *= 2;
  }
  ++finished_[static_cast<size_t>(end_s / finished_bin_s_)];
}

void Metrics::advance(KvTrack& track, double time_s) {
  if (time_s > track.last_time_s) {
    track.page_seconds += static_cast<double>(track.used_pages) * (time_s - track.last_time_s);
    track.last_time_s = time_s;
  }
}

void Metrics::set_tier_totals(int32_t instance, const TierTotals& totals) {
  if (tiers_.size() < steps_.size()) tiers_.resize(steps_.size());
  tiers_[static_cast<size_t>(instance)] = totals;
}

void Metrics::on_tier_step(double load_s, double store_s, double stall_s) {
  tier_load_s_ += load_s;
  tier_store_s_ += store_s;
  tier_stall_s_ += stall_s;
  ++tier_steps_;
}

void Metrics::set_window_totals(int32_t instance, const WindowKvTotals& totals) {
  if (windows_.size() < steps_.size()) windows_.resize(steps_.size());
  windows_[static_cast<size_t>(instance)] = totals;
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

void Metrics::on_state_slots(int32_t instance, double time_s, int64_t used, int64_t total) {
  if (state_.size() <= static_cast<size_t>(instance)) state_.resize(static_cast<size_t>(instance) + 1);
  KvTrack& k = state_[static_cast<size_t>(instance)];
  advance(k, time_s);
  advance(state_total_, time_s);
  state_total_.capacity_pages += total - k.capacity_pages;
  k.capacity_pages = total;
  state_total_.used_pages += used - k.used_pages;
  state_total_.peak_pages = std::max(state_total_.peak_pages, state_total_.used_pages);
  k.used_pages = used;
  k.peak_pages = std::max(k.peak_pages, used);
}

// Builds metrics.json section by section (a friend, so the JSON type stays out of metrics.h).
struct MetricsJson {
  static constexpr double kMs = 1e3;  // latencies are reported in milliseconds

  static double ratio(int64_t part, int64_t whole) {
    return whole > 0 ? rounded(static_cast<double>(part) / static_cast<double>(whole)) : 0.0;
  }

  // The host KV tier: hits per tier over admissions' lookups, bytes each way, transfer and stall time.
  static Json windows(const Metrics& m) {
    WindowKvTotals t;
    for (const WindowKvTotals& i : m.windows_) {
      t.capacity_pages += i.capacity_pages;
      t.peak_used_pages += i.peak_used_pages;
      t.dropped_pages += i.dropped_pages;
    }
    return {{"capacity_pages", t.capacity_pages},
            {"peak_used_pages", t.peak_used_pages},
            {"dropped_pages", t.dropped_pages}};
  }

  static Json tiers(const Metrics& m) {
    TierTotals t;
    for (const TierTotals& i : m.tiers_) {
      t.host_capacity_pages += i.host_capacity_pages;
      t.host_cached_pages += i.host_cached_pages;
      t.lookup_tokens += i.lookup_tokens;
      t.hit_tokens += i.hit_tokens;
      t.host_hit_tokens += i.host_hit_tokens;
      t.loaded_bytes += i.loaded_bytes;
      t.written_bytes += i.written_bytes;
      t.host_evicted_pages += i.host_evicted_pages;
    }
    const int64_t hbm_hits = t.hit_tokens - t.host_hit_tokens;
    return {{"lookup_tokens", t.lookup_tokens},
            {"hbm_hit_tokens", hbm_hits},
            {"host_hit_tokens", t.host_hit_tokens},
            {"hbm_hit_rate", ratio(hbm_hits, t.lookup_tokens)},
            {"host_hit_rate", ratio(t.host_hit_tokens, t.lookup_tokens)},
            {"hit_rate", ratio(t.hit_tokens, t.lookup_tokens)},
            {"host_capacity_pages", t.host_capacity_pages},
            {"host_cached_pages", t.host_cached_pages},
            {"host_evicted_pages", t.host_evicted_pages},
            {"bytes_hbm_to_host", t.written_bytes},
            {"bytes_host_to_hbm", t.loaded_bytes},
            {"steps_with_transfers", m.tier_steps_},
            {"load_s", rounded(m.tier_load_s_)},
            {"store_s", rounded(m.tier_store_s_)},
            {"stall_s", rounded(m.tier_stall_s_)}};
  }

  static Json requests(const Metrics& m) {
    Json rejected = Json::object();
    for (const auto& [reason, count] : m.rejected_) rejected[reason] = count;
    return {{"arrived", m.arrived_},
            {"completed", m.completed_},
            {"rejected", m.rejected_total_},
            {"rejected_by_reason", rejected},
            {"in_flight_at_end", m.arrived_ - m.completed_ - m.rejected_total_},
            {"preempted", m.preempted_requests_},
            {"preemptions", m.preemptions_},
            {"retracted", m.retracted_requests_},  // of the preempted: retracted out of KV in decode
            {"retractions", m.retractions_}};
  }

  // Only with a warm-up phase, so runs without one keep their metrics.json as it was.
  static void warmup(const Metrics& m, Json& requests) {
    if (m.warmup_requests_ > 0) requests["warmup"] = m.warmup_requests_;
  }

  static Json latency(const Metrics& m) {
    return {{"ttft", summary_json(m.ttft_s_, kMs)},
            {"tpot", summary_json(m.tpot_s_, kMs)},
            {"itl", summary_json(m.itl_s_, kMs)},
            {"e2e", summary_json(m.e2e_s_, kMs)},
            {"queueing", summary_json(m.queueing_s_, kMs)}};
  }

  static Json throughput(const Metrics& m, double span_s) {
    return {{"span_s", rounded(span_s)},
            {"input_tokens_per_s", per_second(static_cast<double>(m.input_tokens_), span_s)},
            {"output_tokens_per_s", per_second(static_cast<double>(m.output_tokens_), span_s)},
            {"requests_per_s", per_second(static_cast<double>(m.measured_completed_), span_s)}};
  }

  static Json goodput(const Metrics& m, double span_s) {
    return {{"slo_ttft_ms", rounded(m.slo_.ttft_s * kMs)},
            {"slo_tpot_ms", rounded(m.slo_.tpot_s * kMs)},
            {"good_requests", m.good_requests_},
            {"requests_per_s", per_second(static_cast<double>(m.good_requests_), span_s)},
            {"fraction_of_completed", ratio(m.good_requests_, m.measured_completed_)}};
  }

  static Json kv(const Metrics::KvTrack& k, double end_s) {
    return {{"capacity", k.capacity_pages},
            {"peak", k.peak_pages},
            {"mean", end_s > 0 ? rounded(k.page_seconds / end_s) : 0.0}};
  }

  static Json instances(const Metrics& m, double end_s) {
    Json out = Json::array();
    for (size_t i = 0; i < m.kv_.size(); ++i) {
      out.push_back({{"index", i}, {"steps", m.steps_[i]}, {"kv_pages", kv(m.kv_[i], end_s)}});
    }
    return out;
  }

  // Saturation (docs/architecture.md "Outputs"): an open loop offered more than the deployment sustains
  // piles requests up without bound: at offered rate L and sustained rate S, (L - S) more requests are in
  // the system each second. The pile is the waiting queue (a request's wait, so TTFT, grows with its arrival
  // time by (1 - S/L) of the time since the run began) where the engine admits no more, or the running batch
  // where it admits every arrival and each step slows with the batch (SGLang and vLLM prefill first: TTFT
  // stays flat while TPOT grows). The verdict asks for that signature in full, so that a burst or a short
  // run's drain does not raise it: the sustained rate below kSustainedShare of the offered one, and either
  // the mean TTFT of each quarter of the arrivals (by arrival time) at least the previous quarter's, the last
  // quarter's above kRise x the first's and above it by kGrowthShare of the arrival span, or the requests in
  // the system at the end of each quarter of the arrival span at least the previous count, the last above
  // kRise x the first and above it by kGrowthShare of the requests (the growth of a >= ~7% overload over
  // 0.75 of the span: 0.07 x 0.75 = 0.0525).
  static constexpr double kRise = 2.0;
  static constexpr double kGrowthShare = 0.05;
  static constexpr double kSustainedShare = 0.95;

  // Of `counts` (bins of width_s from 0), how many lie before `t_s`, a bin cut by t_s in proportion.
  template <typename CountOf>
  static double before(size_t bins, double width_s, double t_s, CountOf count_of) {
    double n = 0;
    for (size_t i = 0; i < bins; ++i) {
      const double lo = static_cast<double>(i) * width_s;
      if (lo >= t_s) break;
      n += static_cast<double>(count_of(i)) * std::min(1.0, (t_s - lo) / width_s);
    }
    return n;
  }

  // Each of four values at least the previous, the last above kRise x the first and above it by `growth`.
  static bool growing(const std::array<double, 4>& v, double growth) {
    for (size_t q = 1; q < v.size(); ++q)
      if (v[q] < v[q - 1]) return false;
    return v[3] > kRise * v[0] && v[3] - v[0] > growth;
  }

  static Json load(const Metrics& m, double sustained_rps) {
    const double span_s = m.last_arrival_s_ - std::max(m.first_arrival_s_, 0.0);
    const double offered_rps =
        m.measured_requests_ > 1 && span_s > 0 ? static_cast<double>(m.measured_requests_ - 1) / span_s : 0.0;
    std::array<Metrics::LoadBin, 4> quarters{};
    for (size_t i = 0; i < m.load_.size(); ++i) {
      if (m.load_[i].requests == 0) continue;
      const double centre_s = (static_cast<double>(i) + 0.5) * m.load_bin_s_;
      const double share = span_s > 0 ? (centre_s - m.first_arrival_s_) / span_s : 0.0;
      const auto q = static_cast<size_t>(std::clamp(share * 4.0, 0.0, 3.0));
      quarters[q].requests += m.load_[i].requests;
      quarters[q].ttft_s += m.load_[i].ttft_s;
    }
    std::array<double, 4> ttft_s{}, in_system{};
    bool every_quarter = true;  // too few requests to see a trend otherwise
    for (size_t q = 0; q < quarters.size(); ++q) {
      const double end_s = std::max(m.first_arrival_s_, 0.0) + span_s * static_cast<double>(q + 1) / 4;
      in_system[q] =
          before(m.load_.size(), m.load_bin_s_, end_s, [&](size_t i) { return m.load_[i].requests; }) -
          before(m.finished_.size(), m.finished_bin_s_, end_s, [&](size_t i) { return m.finished_[i]; });
      if (quarters[q].requests == 0) {
        every_quarter = false;
        continue;
      }
      ttft_s[q] = quarters[q].ttft_s / static_cast<double>(quarters[q].requests);
    }
    const bool saturated = every_quarter && offered_rps > 0 &&
                           sustained_rps < kSustainedShare * offered_rps &&
                           (growing(ttft_s, kGrowthShare * span_s) ||
                            growing(in_system, kGrowthShare * static_cast<double>(m.measured_requests_)));
    Json ttft = Json::array(), held = Json::array();
    for (const double t : ttft_s) ttft.push_back(rounded(t * kMs));
    for (const double n : in_system) held.push_back(rounded(n));
    return {{"offered_requests_per_s", rounded(offered_rps)},
            {"sustained_requests_per_s", rounded(sustained_rps)},
            {"ttft_mean_ms_by_arrival_quarter", ttft},
            {"requests_in_system_by_arrival_quarter", held},
            {"saturated", saturated}};
  }

  static Json run(const RunInfo& info) {
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
    if (info.warmup_requests > 0) run["warmup_requests"] = info.warmup_requests;
    if (info.wall_s) run["wall_s"] = rounded(*info.wall_s);
    if (info.speed_probe_s) run["speed_probe_s"] = *info.speed_probe_s;
    return run;
  }
};

std::string Metrics::to_json(const RunInfo& info) {
  const double end_s = info.simulated_s;
  const double span_s = first_arrival_s_ >= 0 ? last_finish_s_ - first_arrival_s_ : 0.0;
  for (KvTrack& k : kv_) advance(k, end_s);
  advance(kv_total_, end_s);
  Json j;
  j["requests"] = MetricsJson::requests(*this);
  MetricsJson::warmup(*this, j["requests"]);
  j["latency_ms"] = MetricsJson::latency(*this);
  j["throughput"] = MetricsJson::throughput(*this, span_s);
  j["load"] = MetricsJson::load(*this, per_second(static_cast<double>(measured_completed_), span_s));
  if (slo_.enabled()) j["goodput"] = MetricsJson::goodput(*this, span_s);
  j["prefix_cache"] = {{"input_tokens", input_tokens_},
                       {"hit_tokens", cached_tokens_},
                       {"hit_rate", MetricsJson::ratio(cached_tokens_, input_tokens_)}};
  j["kv_pages"] = MetricsJson::kv(kv_total_, end_s);
  if (state_total_.capacity_pages > 0) {  // only for linear-attention models: other outputs keep their bytes
    advance(state_total_, end_s);
    j["state_slots"] = MetricsJson::kv(state_total_, end_s);
  }
  if (!windows_.empty()) j["kv_window_pages"] = MetricsJson::windows(*this);
  if (!tiers_.empty()) j["kv_tiers"] = MetricsJson::tiers(*this);
  j["instances"] = MetricsJson::instances(*this, end_s);
  // Only with a profile, so that roofline outputs keep their bytes.
  if (profiled_s_ > 0) {
    j["time_sources"] = {{"profile_coverage", rounded(profile_coverage())},
                         {"profile_s", rounded(profiled_s_)},
                         {"other_s", rounded(priced_s_ - profiled_s_)}};
    if (derived_s_ > 0) {  // only where a format had no rows of its own, so other outputs keep their bytes
      j["time_sources"]["derived_share"] = rounded(derived_s_ / priced_s_);
      j["time_sources"]["derived_s"] = rounded(derived_s_);
    }
    // only where a collective's group was not measured, so other outputs keep their bytes
    if (bounded_s_ > 0) {
      j["time_sources"]["bounded_share"] = rounded(bounded_share());
      j["time_sources"]["bounded_s"] = rounded(bounded_s_);
    }
  }
  for (const auto& [name, block] : info.extra_blocks) j[name] = Json::parse(block);
  j["run"] = MetricsJson::run(info);
  if (!info.configuration_json.empty()) j["configuration"] = Json::parse(info.configuration_json);
  return j.dump(2) + "\n";
}

}  // namespace tokenline
