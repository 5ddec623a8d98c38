// Recorder: turns the driver's events into the three outputs (metrics.json, requests.csv, trace.json)
// as they happen: step spans and op spans per rank thread, async spans per request ("request <id>", queued,
// prefill chunk N, decode), counters (running, waiting, KV pages used, batch tokens). Keeps only the
// per-request trace state of requests still in the system: memory follows the work in flight, not the
// run's length (rows are written as requests leave; latencies go into histograms). At op detail each
// rank's step span also lists its batch entries (the "batch" arg, grammar in trace_reader.h), so that a
// replay can compare batches entry by entry. What the trace keeps (OutputConfig): no file at detail none;
// steps and counters inside the trace window; request spans of the requests arriving inside it (the
// first K with trace_requests = K). Single-threaded (SimGrid actors are cooperative). The files appear
// only in finish(), which also removes a trace file of the other name (trace.json / trace.json.gz) left by
// an earlier run, or both at detail none; throws InputError from the constructor when the output
// directory cannot be written.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cost/step_cost.h"
#include "engine/core/instance.h"
#include "traces/chrome_trace_writer.h"
#include "traces/metrics.h"
#include "traces/output_config.h"
#include "traces/progress_line.h"
#include "traces/requests_csv_writer.h"

namespace tokenline {

class Recorder {
 public:
  // Writes into output.dir; metrics per instance (instances of them) with goodput under slo.
  Recorder(const OutputConfig& output, const Slo& slo, int32_t instances);

  void describe_instance(int32_t instance, const std::string& parallel_name, int32_t dp_ranks,
                         int64_t kv_pages_per_rank);
  void on_arrival(int32_t instance, RequestId id, double now_s);
  // A closed loop's warm-up phase: the first `requests` arrivals (all of which arrive before any other:
  // sim/driver/feeder.h) are left out of latency_ms and goodput (Metrics::on_request). Before any arrival.
  void set_warmup_requests(int64_t requests) { warmup_requests_ = requests; }
  // The client's view of a first token: it arrives latency_s after the step that produced it, while the
  // request decodes on (a serving path's first response that no step contains; the profile's
  // first_token_latency_s). requests.csv and the latency metrics take first_token_s + latency_s, and a
  // request that finished sooner (a short output) is seen to finish then too: its last token cannot come
  // before its first. Steps, spans and the closed loop keep engine time.
  void set_first_token_latency(double latency_s) { first_token_latency_s_ = latency_s; }
  // Before commit: preempted requests (plan.ranks[r].preemptions) go back to the queue.
  // A retraction's wait is named "retracted" instead of "queued", so it stands out in the timeline.
  void on_preemption(int32_t instance, RequestId id, double now_s, bool retraction);
  void on_step(int32_t instance, const StepPlan& plan, const StepOutcome& outcome, const StepCost* cost,
               double start_s, const InstanceCounters& counters);
  void on_record(const RequestRecord& record, int32_t instance);

  // PD disaggregation. An instance that only prefills hands requests off after their last chunk (no
  // decode span there); one that only decodes receives them with their KV.
  struct PdHop {
    int32_t decode_instance = -1;
    double transfer_bytes = 0;
    double transfer_s = 0;
  };
  void set_role(int32_t instance, InstanceRole role);
  // The request left its prefill instance: the prefill side's request span closes.
  void on_handoff(const RequestRecord& record, int32_t prefill_instance);
  // kv_transfer span on the prefill instance; the decode side's request span starts at end_s; a flow
  // arrow runs from the step of the last prefill chunk to the first decode step.
  void on_kv_transfer(RequestId id, int32_t prefill_instance, int32_t decode_instance, double start_s,
                      double end_s, double bytes);
  // The request's final record (instance: where it entered, the prefill instance under PD).
  void on_record(const RequestRecord& record, int32_t instance, const PdHop& hop);

  int64_t events() const { return events_; }
  int64_t completed() const { return metrics_.completed(); }
  int64_t arrived() const { return metrics_.arrived(); }
  Metrics& metrics() { return metrics_; }
  // The trace being written, for tracks other than the instances' (the simgrid backend's link counters).
  ChromeTraceWriter& trace() { return trace_; }
  // Ends the progress line, writes metrics.json and publishes every file. Returns false (with why) when a
  // write failed.
  bool finish(const RunInfo& info, std::string* why);

 private:
  enum class Phase : uint8_t { kQueued, kRunning, kDecoding };
  struct RequestTrace {
    double arrival_s = 0;
    bool traced = false;     // its async spans are written (inside the window, among the sampled)
    bool scheduled = false;  // a step has computed it: its queueing delay is counted
    bool warmup = false;     // of the warm-up phase: no latency sample
    int32_t chunks = 0;
    Phase phase = Phase::kQueued;
    const char* queued_name = "queued";  // the open wait span: "queued", or "retracted" after a retraction
    int32_t last_chunk_rank = 0;         // PD: where the flow arrow starts
    double last_chunk_start_s = 0;
    bool flow_pending = false;  // PD: the first decode step ends the flow arrow
  };
  struct CounterState {
    int64_t running = -1;
    int64_t waiting = -1;
    int64_t kv_used = -1;
    int64_t batch_tokens = -1;
    int64_t state_used = -1;  // linear-attention state slots (never written without them)
    int64_t window_used = 0;  // 0, not -1: a model without window layers never writes the counter
  };
  // A rank's step span; at op detail its args end with the batch composition ("batch", trace_reader.h).
  void step_span(int pid, int tid, const Batch& batch, std::span<const int32_t> accepted, double start_s,
                 double duration_s, std::initializer_list<TraceArg> args);
  void trace_entries(int pid, const StepPlan& plan, double start_s, double end_s);
  void trace_entry(int pid, int32_t rank, const BatchEntry& e, RequestTrace& rt, double start_s,
                   double end_s);
  void trace_steps(int pid, const StepPlan& plan, const StepOutcome& outcome, const StepCost* cost,
                   double start_s);
  void trace_counters(int32_t instance, double time_s, const InstanceCounters& counters);
  void record_tiers(int32_t instance, int pid, const StepPlan& plan, const StepOutcome& outcome,
                    double start_s, const InstanceCounters& counters);
  void remove_stale_traces() const;
  void write_record(const RequestRecord& record, int32_t instance, int32_t trace_instance, const PdHop* hop);

  std::string dir_;
  std::string configuration_json_;  // OutputConfig::configuration_json
  TraceDetail detail_;
  TraceWindow window_;
  int64_t trace_requests_;  // -1: every request in the window
  int64_t traced_requests_ = 0;
  const char* trace_name_;
  Metrics metrics_;
  RequestsCsvWriter csv_;
  ChromeTraceWriter trace_;
  std::unordered_map<RequestId, RequestTrace> live_;  // lookups only: never iterated into outputs
  std::set<int> host_link_named_;                     // pids whose host-link thread has its name
  std::vector<CounterState> counters_;                // last values written to the trace, by instance
  std::vector<int64_t> kv_used_;                      // last KV pages given to the metrics, by instance
  std::vector<int64_t> state_used_;                   // last state slots given to the metrics, by instance
  std::vector<InstanceRole> roles_;                   // by instance
  std::vector<std::string> parallel_names_;           // by instance (describe_instance)
  ProgressLine progress_;                             // stderr, when OutputConfig::progress
  std::string name_scratch_;
  std::string batch_scratch_;
  int64_t events_ = 0;
  int64_t warmup_requests_ = 0;       // set_warmup_requests
  double first_token_latency_s_ = 0;  // set_first_token_latency
  int64_t arrivals_ = 0;
};

}  // namespace tokenline
