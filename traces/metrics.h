// Metrics: aggregates a run into metrics.json (docs/architecture.md "Outputs"). The driver feeds it arrivals,
// finished/rejected requests (RequestRow), inter-token gaps, queueing delays, KV page samples and steps
// as they happen; nothing per request or per token is kept: latency distributions are histograms
// (latency_histogram.h: exact count, mean and max, percentiles within 0.39%). Single-threaded; deterministic
// given the same call sequence. Wall-clock time is written only when RunInfo::wall_s is set (opt-in), because
// it is the one field that differs between identical runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/latency_histogram.h"
#include "traces/request_row.h"

namespace tokenline {

struct Slo {
  double ttft_s = 0;  // 0: no TTFT bound
  double tpot_s = 0;  // 0: no TPOT bound
  bool enabled() const { return ttft_s > 0 || tpot_s > 0; }
};

struct RunInfo {
  std::string mode = "sim";
  std::string backend;
  std::string model;
  std::string hardware;
  std::string cluster;  // empty when the run named only --hardware
  std::string parallelism;
  std::string router;
  std::string workload;
  int32_t instances = 1;
  uint64_t seed = 0;
  double simulated_s = 0;     // virtual time at the end of the run
  int64_t events = 0;         // arrivals + steps + request completions handled by the driver
  int64_t skipped_lines = 0;  // malformed workload lines skipped under --skip-bad-lines
  // Closed loop with a warm-up phase (sim --warmup): its request count (Recorder::finish fills it from
  // set_warmup_requests), written only when > 0. Those requests count in requests, throughput and tokens,
  // not in latency_ms or goodput (requests.warmup says how many left in it); requests.csv keeps every row
  // (the warm-up's are the first N ids of a synthetic workload, which is how `calibrate` leaves them out
  // of its means).
  int64_t warmup_requests = 0;
  std::optional<double> wall_s;  // written only when set (nondeterministic)
  // The real engine's machine speed probe around the run (engine/runtime/op_profiler.h speed_probe_s,
  // mean of before and after); written only when set (nondeterministic). sim --speed-of reads it.
  std::optional<double> speed_probe_s;
  // The resolved configuration, a JSON object's text (OutputConfig::configuration_json); "": none.
  std::string configuration_json = {};
  // Blocks written before "run", each (name, a JSON object's text), in order: a run's "cost" and
  // "autoscaling" (traces/cost_block.h, sim/driver/autoscaler_fleet.h); none: the document as before.
  std::vector<std::pair<std::string, std::string>> extra_blocks = {};
};

// One instance's host KV tier so far (engine/core/kv_tier.h), summed over its ranks.
struct TierTotals {
  int64_t host_capacity_pages = 0;
  int64_t host_cached_pages = 0;
  int64_t lookup_tokens = 0;    // prompt tokens looked up at admissions
  int64_t hit_tokens = 0;       // of them, found in either tier
  int64_t host_hit_tokens = 0;  // of those, found only in host (loaded back)
  int64_t loaded_bytes = 0;     // host -> HBM
  int64_t written_bytes = 0;    // HBM -> host
  int64_t host_evicted_pages = 0;
};

// One instance's window-layer KV pool (engine/core/window_kv.h), summed over its ranks.
struct WindowKvTotals {
  int64_t capacity_pages = 0;
  int64_t peak_used_pages = 0;  // the ranks' peaks, summed
  int64_t dropped_pages = 0;    // returned as they fell out of a request's window
};

class Metrics {
 public:
  Metrics(int32_t instances, Slo slo);

  void on_arrival() { ++arrived_; }
  // A request left the system, completed or rejected. One of a warm-up phase (r.warmup) counts in the
  // requests block only (requests.warmup says how many): throughput, tokens, the prefix cache, latency_ms,
  // goodput and load leave it out, all the same way, as a benchmark leaves its warm-up out.
  void on_request(const RequestRow& r);
  void on_token_gap(double gap_s) { itl_s_.add(gap_s); }  // one inter-token latency sample
  // A request's wait from arrival to the start of the first step that computes it (once per request).
  void on_queue_wait(double wait_s) { queueing_s_.add(wait_s); }
  void on_step(int32_t instance) { ++steps_[static_cast<size_t>(instance)]; }
  // A priced step: its time, the part of it priced from a measured op profile (--profile), and of that the
  // part priced from another weight format's rows by the rule (docs/weight-formats.md) and the part that is
  // collectives priced at a smaller group's rows, a lower bound (topologies/profiles/README.md).
  void on_step_sources(double total_s, double profile_s, double derived_s = 0, double bounded_s = 0) {
    priced_s_ += total_s;
    profiled_s_ += profile_s;
    derived_s_ += derived_s;
    bounded_s_ += bounded_s;
  }
  // Of the step time, the share priced at a smaller group's collective rows (0 without a profile).
  double bounded_share() const { return priced_s_ > 0 ? bounded_s_ / priced_s_ : 0.0; }
  // The host tier's totals of an instance (a run without one never calls it: no kv_tiers block).
  void set_tier_totals(int32_t instance, const TierTotals& totals);
  // A step that moved pages between tiers: its load-back and write-back times and its stall.
  void on_tier_step(double load_s, double store_s, double stall_s);
  // The window pool's totals of an instance (a model without window layers never calls it: no block).
  void set_window_totals(int32_t instance, const WindowKvTotals& totals);
  void set_kv_capacity(int32_t instance, int64_t pages);
  void on_kv_pages(int32_t instance, double time_s, int64_t used_pages);  // used pages from time_s on
  // A linear-attention model's state slots (engine/core/state_pool.h), the instance's over its ranks: used
  // from time_s on, of `total`. metrics.json has a state_slots block only when some instance has slots.
  void on_state_slots(int32_t instance, double time_s, int64_t used, int64_t total);

  int64_t arrived() const { return arrived_; }
  int64_t completed() const { return completed_; }
  int64_t rejected() const { return rejected_total_; }
  int64_t preemptions() const { return preemptions_; }
  int64_t retractions() const { return retractions_; }
  int64_t prefix_hit_tokens() const { return cached_tokens_; }
  int64_t input_tokens() const { return input_tokens_; }    // over completed requests outside the warm-up
  int64_t output_tokens() const { return output_tokens_; }  // the same requests' generated tokens
  // The share of predicted step time priced from a measured op profile (0 without one, or no step).
  double profile_coverage() const { return priced_s_ > 0 ? profiled_s_ / priced_s_ : 0.0; }

  // Serializes everything; `info.simulated_s` closes the KV time integrals. REQUIRES: called once.
  std::string to_json(const RunInfo& info);

 private:
  struct KvTrack {
    int64_t capacity_pages = 0;
    int64_t used_pages = 0;
    int64_t peak_pages = 0;
    double last_time_s = 0;
    double page_seconds = 0;  // integral of used pages over time
  };
  // Completed requests outside the warm-up, by arrival time in bins of width_s from 0 (kLoadBins of them;
  // the width doubles, merging pairs, when an arrival falls past the last): what the load block compares
  // between the early and the late arrivals without keeping anything per request.
  struct LoadBin {
    int64_t requests = 0;
    double ttft_s = 0;  // summed
  };
  static constexpr size_t kLoadBins = 64;
  static constexpr double kFirstLoadBinS = 0.125;  // doubles up to the run's span: 64 bins cover 8 s first
  static void advance(KvTrack& track, double time_s);
  void add_load(double arrival_s, double ttft_s, double finish_s);
  friend struct MetricsJson;  // the serializer (metrics.cpp), kept out of this header with its JSON type

  Slo slo_;
  int64_t arrived_ = 0;
  int64_t completed_ = 0;
  int64_t rejected_total_ = 0;
  std::map<std::string, int64_t> rejected_;  // ordered by reason: deterministic output
  int64_t preemptions_ = 0;
  int64_t preempted_requests_ = 0;
  int64_t retractions_ = 0;
  int64_t retracted_requests_ = 0;
  double priced_s_ = 0;       // summed predicted step times
  double profiled_s_ = 0;     // of which priced from a measured op profile
  double derived_s_ = 0;      // of that, from another weight format's rows by the rule
  double bounded_s_ = 0;      // of that, collectives at a smaller group's rows (a lower bound)
  int64_t input_tokens_ = 0;  // over completed requests
  int64_t output_tokens_ = 0;
  int64_t cached_tokens_ = 0;
  int64_t good_requests_ = 0;
  int64_t warmup_requests_ = 0;     // left the system in the warm-up phase (RequestRow::warmup)
  int64_t measured_completed_ = 0;  // completed outside it: what latency_ms and goodput describe
  int64_t measured_requests_ = 0;   // completed or rejected outside it: the offered load
  double first_arrival_s_ = -1;     // of the requests outside the warm-up
  double last_arrival_s_ = 0;
  double last_finish_s_ = 0;
  std::vector<LoadBin> load_ = std::vector<LoadBin>(kLoadBins);
  double load_bin_s_ = kFirstLoadBinS;
  // The same requests by finish time, binned as load_ is (the width doubles likewise): with load_'s
  // arrivals, how many were in the system at any time (the saturation verdict, metrics.cpp).
  std::vector<int64_t> finished_ = std::vector<int64_t>(kLoadBins);
  double finished_bin_s_ = kFirstLoadBinS;
  LatencyHistogram ttft_s_;
  LatencyHistogram tpot_s_;
  LatencyHistogram itl_s_;
  LatencyHistogram e2e_s_;
  LatencyHistogram queueing_s_;
  std::vector<int64_t> steps_;
  std::vector<KvTrack> kv_;
  std::vector<TierTotals> tiers_;        // by instance; empty without a host tier
  std::vector<WindowKvTotals> windows_;  // by instance; empty without window layers
  double tier_load_s_ = 0;
  double tier_store_s_ = 0;
  double tier_stall_s_ = 0;
  int64_t tier_steps_ = 0;
  KvTrack kv_total_;
  std::vector<KvTrack> state_;  // by instance, the slots as KvTrack's pages; empty without linear layers
  KvTrack state_total_;
};

}  // namespace tokenline
