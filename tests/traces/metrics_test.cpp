#include "traces/metrics.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace tokenline {
namespace {

RequestRow done(int64_t id, double arrival, double first, double finish, int64_t out, int64_t cached) {
  return RequestRow{.id = id,
                    .arrival_s = arrival,
                    .first_token_s = first,
                    .finish_s = finish,
                    .input_tokens = 1000,
                    .generated_tokens = out,
                    .cached_tokens = cached,
                    .instance = 0,
                    .completed = true};
}

RunInfo run_ending_at(double end_s) {
  RunInfo info;
  info.simulated_s = end_s;
  return info;
}

TEST_CASE("metrics count and summarize requests and apply the SLO", "[metrics]") {
  Metrics m(1, Slo{.ttft_s = 0.5, .tpot_s = 0.0});
  for (int i = 0; i < 3; ++i) m.on_arrival();
  m.on_request(done(0, 0.0, 0.2, 1.2, 11, 500));  // ttft 0.2, tpot 0.1
  m.on_request(done(1, 0.0, 1.0, 2.0, 11, 0));    // ttft 1.0 misses the SLO
  m.on_request(
      RequestRow{.id = 2, .arrival_s = 0.5, .finish_s = 0.5, .input_tokens = 5, .status = "too_long"});
  const auto j = nlohmann::json::parse(m.to_json(run_ending_at(2.0)));
  CHECK(j["requests"]["arrived"] == 3);
  CHECK(j["requests"]["completed"] == 2);
  CHECK(j["requests"]["rejected_by_reason"]["too_long"] == 1);
  CHECK(j["latency_ms"]["ttft"]["p50"].get<double>() == Approx(200.0));
  CHECK(j["latency_ms"]["ttft"]["max"].get<double>() == Approx(1000.0));
  CHECK(j["latency_ms"]["tpot"]["mean"].get<double>() == Approx(100.0));
  CHECK(j["goodput"]["good_requests"] == 1);
  CHECK(j["prefix_cache"]["hit_rate"].get<double>() == Approx(0.25));
  CHECK_FALSE(j["run"].contains("wall_s"));
  CHECK_FALSE(j["run"].contains("speed_probe_s"));    // only a real run measures the machine
  CHECK_FALSE(j["run"].contains("warmup_requests"));  // no warm-up phase
  RunInfo warm = run_ending_at(2.0);
  warm.warmup_requests = 8;
  CHECK(nlohmann::json::parse(m.to_json(warm))["run"]["warmup_requests"] == 8);
  RunInfo real = run_ending_at(2.0);
  real.speed_probe_s = 0.025;
  CHECK(nlohmann::json::parse(m.to_json(real))["run"]["speed_probe_s"].get<double>() == Approx(0.025));
}

TEST_CASE("a warm-up request counts in the requests block only: not in throughput, latency or goodput",
          "[metrics]") {
  Metrics m(1, Slo{.ttft_s = 0.5, .tpot_s = 0.0});
  for (int i = 0; i < 3; ++i) m.on_arrival();
  RequestRow warm = done(0, 0.0, 4.0, 9.0, 11, 0);  // ttft 4 s: would miss the SLO and dominate the mean
  warm.warmup = true;
  m.on_request(warm);
  m.on_request(done(1, 9.0, 9.2, 10.2, 11, 0));  // ttft 0.2, tpot 0.1
  m.on_request(done(2, 9.0, 9.4, 10.4, 11, 0));  // ttft 0.4
  const auto j = nlohmann::json::parse(m.to_json(run_ending_at(11.0)));
  CHECK(j["requests"]["completed"] == 3);
  CHECK(j["requests"]["warmup"] == 1);
  CHECK(j["latency_ms"]["ttft"]["mean"].get<double>() == Approx(300.0));
  CHECK(j["latency_ms"]["ttft"]["max"].get<double>() == Approx(400.0));
  CHECK(j["latency_ms"]["e2e"]["max"].get<double>() == Approx(1400.0));
  CHECK(j["goodput"]["good_requests"] == 2);
  CHECK(j["goodput"]["fraction_of_completed"].get<double>() == Approx(1.0));
  // The measured phase: two requests' 22 tokens from the first measured arrival (9.0) to the last finish.
  CHECK(j["throughput"]["output_tokens_per_s"].get<double>() == Approx(22.0 / 1.4));
  CHECK(j["throughput"]["requests_per_s"].get<double>() == Approx(2.0 / 1.4));
  CHECK(j["throughput"]["span_s"].get<double>() == Approx(1.4));
  CHECK(j["prefix_cache"]["input_tokens"] == 2000);
  CHECK_FALSE(
      nlohmann::json::parse(Metrics(1, Slo{}).to_json(run_ending_at(1.0)))["requests"].contains("warmup"));
}

// An open loop at `offered` req/s for `seconds`, served FIFO at `sustained` req/s, each request taking
// `service_s` once it starts: its TTFT is its wait plus service_s.
Metrics queue_run(double offered, double sustained, double seconds, double service_s) {
  Metrics m(1, Slo{});
  double free_s = 0;
  const auto n = static_cast<int64_t>(offered * seconds);
  for (int64_t i = 0; i < n; ++i) {
    const double arrival = static_cast<double>(i) / offered;
    const double start = std::max(arrival, free_s);
    free_s = start + 1.0 / sustained;
    m.on_arrival();
    m.on_request(done(i, arrival, start + service_s, start + service_s + 1.0, 11, 0));
  }
  return m;
}

TEST_CASE("an open loop offered more than it sustains is saturated, with both rates", "[metrics]") {
  Metrics m = queue_run(20.0, 12.0, 100.0, 0.3);
  const auto j = nlohmann::json::parse(m.to_json(run_ending_at(200.0)));
  CHECK(j["load"]["saturated"] == true);
  CHECK(j["load"]["offered_requests_per_s"].get<double>() == Approx(20.0).epsilon(0.01));
  CHECK(j["load"]["sustained_requests_per_s"].get<double>() == Approx(12.0).epsilon(0.02));
  const auto& q = j["load"]["ttft_mean_ms_by_arrival_quarter"];
  CHECK(q[3].get<double>() > 5 * q[0].get<double>());  // the wait grows with the arrival time
}

TEST_CASE("a healthy open loop is not saturated, even with the drain of a short run", "[metrics]") {
  // 40 requests over 4 s served at twice the rate; each finishes 1.3 s after it starts, so the last
  // finish lies well after the last arrival and the sustained rate reads below the offered one.
  Metrics m = queue_run(10.0, 20.0, 4.0, 0.3);
  const auto j = nlohmann::json::parse(m.to_json(run_ending_at(10.0)));
  CHECK(j["load"]["sustained_requests_per_s"].get<double>() <
        0.95 * j["load"]["offered_requests_per_s"].get<double>());
  CHECK(j["load"]["saturated"] == false);
  Metrics healthy = queue_run(5.0, 12.0, 200.0, 0.3);
  CHECK(nlohmann::json::parse(healthy.to_json(run_ending_at(300.0)))["load"]["saturated"] == false);
}

TEST_CASE("a burst late in a run does not read as saturation", "[metrics]") {
  Metrics m(1, Slo{});
  for (int64_t i = 0; i < 100; ++i) {  // 1 req/s, TTFT 0.2 s, but requests 60-69 wait 5 s
    const double arrival = static_cast<double>(i);
    const double ttft = i >= 60 && i < 70 ? 5.0 : 0.2;
    m.on_request(done(i, arrival, arrival + ttft, arrival + ttft + 30.0, 11, 0));
  }
  CHECK(nlohmann::json::parse(m.to_json(run_ending_at(200.0)))["load"]["saturated"] == false);
}

TEST_CASE("metrics count retractions apart, within the preemptions", "[metrics]") {
  Metrics m(1, Slo{});
  RequestRow a = done(0, 0.0, 0.2, 1.2, 11, 0);
  a.preemptions = 3;
  a.retractions = 2;
  RequestRow b = done(1, 0.0, 0.2, 1.2, 11, 0);
  b.preemptions = 1;
  m.on_request(a);
  m.on_request(b);
  const auto j = nlohmann::json::parse(m.to_json(run_ending_at(2.0)));
  CHECK(j["requests"]["preempted"] == 2);
  CHECK(j["requests"]["preemptions"] == 4);
  CHECK(j["requests"]["retracted"] == 1);
  CHECK(j["requests"]["retractions"] == 2);
  CHECK(m.retractions() == 2);
}

TEST_CASE("KV pages mean is weighted by time", "[metrics]") {
  Metrics m(2, Slo{});
  m.set_kv_capacity(0, 100);
  m.set_kv_capacity(1, 100);
  m.on_kv_pages(0, 0.0, 10);  // instance 0: 10 pages for 1 s, then 30 for 1 s -> mean 20
  m.on_kv_pages(1, 0.5, 40);  // instance 1: 0 for 0.5 s, 40 for 1.5 s -> mean 30
  m.on_kv_pages(0, 1.0, 30);
  const auto j = nlohmann::json::parse(m.to_json(run_ending_at(2.0)));
  CHECK(j["kv_pages"]["capacity"] == 200);
  CHECK(j["kv_pages"]["peak"] == 70);
  CHECK(j["kv_pages"]["mean"].get<double>() == Approx(50.0));
  CHECK(j["instances"][0]["kv_pages"]["mean"].get<double>() == Approx(20.0));
  CHECK(j["instances"][1]["kv_pages"]["peak"] == 40);
}

}  // namespace

TEST_CASE("time sources: the share priced from another weight format's rows, only where there is one",
          "[metrics]") {
  Metrics m(1, Slo{});
  m.on_step_sources(2.0, 1.0);
  const auto none = nlohmann::json::parse(m.to_json(run_ending_at(2.0)));
  CHECK(none["time_sources"]["profile_coverage"].get<double>() == Approx(0.5));
  CHECK_FALSE(none["time_sources"].contains("derived_share"));
  m.on_step_sources(2.0, 2.0, 1.0);
  const auto some = nlohmann::json::parse(m.to_json(run_ending_at(4.0)));
  CHECK(some["time_sources"]["profile_coverage"].get<double>() == Approx(0.75));
  CHECK(some["time_sources"]["derived_share"].get<double>() == Approx(0.25));
  CHECK(some["time_sources"]["derived_s"].get<double>() == Approx(1.0));
  CHECK_FALSE(some["time_sources"].contains("bounded_share"));
}

TEST_CASE("time sources: the share of collectives bounded by a smaller group's rows, only where there is one",
          "[metrics]") {
  Metrics m(1, Slo{});
  m.on_step_sources(2.0, 1.5, 0.0, 0.5);
  m.on_step_sources(2.0, 1.0);
  const auto j = nlohmann::json::parse(m.to_json(run_ending_at(4.0)));
  CHECK(j["time_sources"]["profile_coverage"].get<double>() == Approx(0.625));
  CHECK(j["time_sources"]["bounded_share"].get<double>() == Approx(0.125));
  CHECK(j["time_sources"]["bounded_s"].get<double>() == Approx(0.5));
  CHECK_FALSE(j["time_sources"].contains("derived_share"));
}

}  // namespace tokenline
