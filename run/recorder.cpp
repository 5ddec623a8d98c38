#include "run/recorder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "traces/output_file.h"
#include "traces/trace_reader.h"

namespace tokenline {
namespace {

constexpr const char* kRequestCategory = "request";
constexpr double kNanosecondsPerSecond = 1e9;  // step breakdown args are integer nanoseconds

std::string out_path(const std::string& dir, const char* file) {
  return (std::filesystem::path(dir) / file).string();
}

int pid_of(int32_t instance) {
  return instance + 1;
}  // pid 0 is shown oddly by some viewers

// A request's enclosing async span is named by its id, so that a timeline's request can be found by it.
std::string request_span_name(RequestId id) {
  return "request " + std::to_string(id);
}

int64_t to_ns(double s) {
  return static_cast<int64_t>(s * kNanosecondsPerSecond + 0.5);
}

ChromeTraceWriter make_trace(const OutputConfig& output) {
  if (output.trace_detail == TraceDetail::kNone) return ChromeTraceWriter();
  return ChromeTraceWriter(out_path(output.dir, trace_file_name(output)),
                           output.trace_gzip ? TraceEncoding::kGzip : TraceEncoding::kPlain);
}

}  // namespace

Recorder::Recorder(const OutputConfig& output, const Slo& slo, int32_t instances)
    : dir_(output.dir),
      configuration_json_(output.configuration_json),
      detail_(output.trace_detail),
      window_(output.trace_window),
      trace_requests_(output.trace_requests),
      trace_name_(output.trace_detail == TraceDetail::kNone ? nullptr : trace_file_name(output)),
      metrics_(instances, slo),
      csv_(out_path(output.dir, "requests.csv")),
      trace_(make_trace(output)),
      counters_(static_cast<size_t>(instances)),
      kv_used_(static_cast<size_t>(instances), -1),
      roles_(static_cast<size_t>(instances), InstanceRole::kColocated),
      parallel_names_(static_cast<size_t>(instances)),
      progress_(output.progress) {}

void Recorder::describe_instance(int32_t instance, const std::string& parallel_name, int32_t dp_ranks,
                                 int64_t kv_pages_per_rank) {
  const int pid = pid_of(instance);
  parallel_names_[static_cast<size_t>(instance)] = parallel_name;
  trace_.process_name(pid, "instance " + std::to_string(instance) + " (" + parallel_name + ")");
  for (int32_t r = 0; r < dp_ranks; ++r) {
    trace_.thread_name(pid, trace_tid(r, TraceStream::kCompute), "rank " + std::to_string(r) + " compute");
    trace_.thread_name(pid, trace_tid(r, TraceStream::kComm), "rank " + std::to_string(r) + " comm");
  }
  metrics_.set_kv_capacity(instance, kv_pages_per_rank * dp_ranks);
}

void Recorder::on_arrival(int32_t instance, RequestId id, double now_s) {
  ++events_;
  metrics_.on_arrival();
  RequestTrace& rt = live_[id];
  rt = RequestTrace{.arrival_s = now_s};
  rt.warmup = arrivals_++ < warmup_requests_;
  rt.traced = trace_.enabled() && window_.contains(now_s) &&
              (trace_requests_ < 0 || traced_requests_ < trace_requests_);
  if (!rt.traced) return;
  ++traced_requests_;
  const int pid = pid_of(instance);
  trace_.async_begin(pid, kRequestCategory, id, request_span_name(id), now_s);
  trace_.async_begin(pid, kRequestCategory, id, "queued", now_s);
}

void Recorder::on_preemption(int32_t instance, RequestId id, double now_s, bool retraction) {
  auto it = live_.find(id);
  if (it == live_.end() || !it->second.traced) return;
  const int pid = pid_of(instance);
  if (it->second.phase == Phase::kDecoding) trace_.async_end(pid, kRequestCategory, id, "decode", now_s);
  if (it->second.phase != Phase::kQueued) {
    it->second.queued_name = retraction ? "retracted" : "queued";
    trace_.async_begin(pid, kRequestCategory, id, it->second.queued_name, now_s);
  }
  it->second.phase = Phase::kQueued;
}

void Recorder::trace_entries(int pid, const StepPlan& plan, double start_s, double end_s) {
  for (const Batch& batch : plan.batches.ranks) {
    for (const BatchEntry& e : batch.entries) {
      auto it = live_.find(e.id);
      if (it == live_.end()) continue;
      RequestTrace& rt = it->second;
      if (!rt.scheduled) {
        rt.scheduled = true;
        if (!rt.warmup) metrics_.on_queue_wait(start_s - rt.arrival_s);
      }
      if (rt.traced) trace_entry(pid, batch.rank, e, rt, start_s, end_s);
    }
  }
}

void Recorder::trace_entry(int pid, int32_t rank, const BatchEntry& e, RequestTrace& rt, double start_s,
                           double end_s) {
  if (rt.phase == Phase::kQueued) {
    trace_.async_end(pid, kRequestCategory, e.id, rt.queued_name, start_s);
    rt.phase = Phase::kRunning;
  }
  if (e.phase == tokenline::Phase::kPrefill) {
    ++rt.chunks;
    name_scratch_ = "prefill chunk ";
    name_scratch_ += std::to_string(rt.chunks);
    trace_.async_begin(pid, kRequestCategory, e.id, name_scratch_, start_s,
                       {{"tokens", e.new_tokens}, {"context", e.context_tokens}});
    trace_.async_end(pid, kRequestCategory, e.id, name_scratch_, end_s);
    if (!e.last_chunk) return;
    rt.last_chunk_rank = rank;
    rt.last_chunk_start_s = start_s;
    if (roles_[static_cast<size_t>(pid - 1)] == InstanceRole::kPrefillOnly) return;  // decodes elsewhere
    trace_.async_begin(pid, kRequestCategory, e.id, "decode", end_s);
    rt.phase = Phase::kDecoding;
  } else if (rt.phase != Phase::kDecoding) {
    if (rt.flow_pending) {
      trace_.flow_end(pid, trace_tid(rank, TraceStream::kCompute), e.id, start_s);
      rt.flow_pending = false;
    }
    trace_.async_begin(pid, kRequestCategory, e.id, "decode", start_s);
    rt.phase = Phase::kDecoding;
  }
}

void Recorder::step_span(int pid, int tid, const Batch& batch, std::span<const int32_t> accepted,
                         double start_s, double duration_s, std::initializer_list<TraceArg> args) {
  if (detail_ == TraceDetail::kStep) {  // the batch composition costs ~as much again as the step spans
    trace_.complete(pid, tid, "step", start_s, duration_s, args);
    return;
  }
  batch_scratch_.clear();
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    const BatchEntry& e = batch.entries[i];
    const bool prefill = e.phase == tokenline::Phase::kPrefill;
    const bool verified = !prefill && i < accepted.size();  // MTP on
    append_batch_entry(batch_scratch_, RecordedEntry{.id = e.id,
                                                     .prefill = prefill,
                                                     .new_tokens = e.new_tokens,
                                                     .context_tokens = prefill ? e.context_tokens : 0,
                                                     .accepted = verified ? accepted[i] : -1});
  }
  trace_.complete(pid, tid, "step", start_s, duration_s, args, TraceText{"batch", batch_scratch_});
}

void Recorder::trace_counters(int32_t instance, double time_s, const InstanceCounters& c) {
  const auto i = static_cast<size_t>(instance);
  if (c.kv.used_pages != kv_used_[i]) {
    metrics_.on_kv_pages(instance, time_s, c.kv.used_pages);
    kv_used_[i] = c.kv.used_pages;
  }
  if (c.kv.state_total_slots > 0) {
    if (state_used_.size() <= i) state_used_.resize(i + 1, -1);
    if (c.kv.state_used_slots != state_used_[i]) {
      metrics_.on_state_slots(instance, time_s, c.kv.state_used_slots, c.kv.state_total_slots);
      state_used_[i] = c.kv.state_used_slots;
    }
  }
  CounterState& last = counters_[i];
  if (!trace_.enabled() || !window_.contains(time_s)) {
    last = CounterState{};  // the first counters inside the window are written whatever their values
    return;
  }
  const int pid = pid_of(instance);
  if (c.running != last.running || c.waiting != last.waiting) {
    trace_.counter(pid, "requests", time_s, {{"running", c.running}, {"waiting", c.waiting}});
    last.running = c.running;
    last.waiting = c.waiting;
  }
  if (c.kv.used_pages != last.kv_used) {
    trace_.counter(pid, "kv_pages", time_s, {{"used", c.kv.used_pages}});
    last.kv_used = c.kv.used_pages;
  }
  if (c.kv.state_total_slots > 0 && c.kv.state_used_slots != last.state_used) {
    trace_.counter(pid, "state_slots", time_s, {{"used", c.kv.state_used_slots}});
    last.state_used = c.kv.state_used_slots;
  }
  if (c.kv.window.used_pages != last.window_used) {  // 0 throughout without window layers: never written
    trace_.counter(pid, "kv_window_pages", time_s, {{"used", c.kv.window.used_pages}});
    last.window_used = c.kv.window.used_pages;
  }
  if (c.last_batch_tokens != last.batch_tokens) {
    trace_.counter(pid, "batch_tokens", time_s, {{"tokens", c.last_batch_tokens}});
    last.batch_tokens = c.last_batch_tokens;
  }
}

void Recorder::on_step(int32_t instance, const StepPlan& plan, const StepOutcome& outcome,
                       const StepCost* cost, double start_s, const InstanceCounters& counters) {
  ++events_;
  metrics_.on_step(instance);
  if (cost != nullptr)
    metrics_.on_step_sources(cost->total_s, cost->profile_s, cost->derived_s, cost->bounded_s);
  const int pid = pid_of(instance);
  if (trace_.enabled() && window_.contains(start_s)) trace_steps(pid, plan, outcome, cost, start_s);
  const double end_s = start_s + outcome.duration_s;
  if (counters.kv.host_total_pages > 0) record_tiers(instance, pid, plan, outcome, start_s, counters);
  if (counters.kv.window.total_pages > 0)  // window layers' pool (engine/core/window_kv.h)
    metrics_.set_window_totals(instance, WindowKvTotals{.capacity_pages = counters.kv.window.total_pages,
                                                        .peak_used_pages = counters.kv.window.peak_used_pages,
                                                        .dropped_pages = counters.kv.window.dropped_pages});
  trace_entries(pid, plan, start_s, end_s);
  trace_counters(instance, end_s, counters);
  progress_.tick(end_s, metrics_.arrived(), metrics_.completed() + metrics_.rejected());
}

// The host KV tier (engine/core/kv_tier.h): totals for metrics.json, and the step's transfers as spans on
// the instance's "host link" thread (named at its first span, so runs without a tier keep their bytes).
void Recorder::record_tiers(int32_t instance, int pid, const StepPlan& plan, const StepOutcome& outcome,
                            double start_s, const InstanceCounters& c) {
  metrics_.set_tier_totals(instance, TierTotals{.host_capacity_pages = c.kv.host_total_pages,
                                                .host_cached_pages = c.kv.host_cached_pages,
                                                .lookup_tokens = c.kv.prefix_query_tokens,
                                                .hit_tokens = c.kv.prefix_hit_tokens,
                                                .host_hit_tokens = c.kv.host_hit_tokens,
                                                .loaded_bytes = c.kv.host_loaded_bytes,
                                                .written_bytes = c.kv.host_written_bytes,
                                                .host_evicted_pages = c.kv.host_evicted_pages});
  if (outcome.tier_load_s <= 0 && outcome.tier_store_s <= 0) return;
  metrics_.on_tier_step(outcome.tier_load_s, outcome.tier_store_s, outcome.tier_stall_s);
  if (!trace_.enabled() || !window_.contains(start_s)) return;
  constexpr int kHostLinkTid = 1 << 20;  // past any rank's compute and comm threads
  if (host_link_named_.insert(pid).second) trace_.thread_name(pid, kHostLinkTid, "host link (KV tier)");
  int64_t load_bytes = 0, store_bytes = 0;
  for (const Batch& b : plan.batches.ranks) {
    load_bytes += b.host_load_bytes;
    // write_back's blocking stores, or the write-through copies where a world waits for them (the CPU
    // engine); a policy has one or the other
    store_bytes += b.host_store_bytes + b.host_async_store_bytes;
  }
  if (outcome.tier_store_s > 0)
    trace_.complete(pid, kHostLinkTid, "kv_store_host", start_s, outcome.tier_store_s,
                    {{"bytes", store_bytes}, {"stall_ns", to_ns(outcome.tier_store_s)}});
  if (outcome.tier_load_s > 0)
    trace_.complete(
        pid, kHostLinkTid, "kv_load_host", start_s + outcome.tier_store_s, outcome.tier_load_s,
        {{"bytes", load_bytes}, {"stall_ns", to_ns(outcome.tier_stall_s - outcome.tier_store_s)}});
}

void Recorder::trace_steps(int pid, const StepPlan& plan, const StepOutcome& outcome, const StepCost* cost,
                           double start_s) {
  const int64_t step = plan.batches.step_index;
  const int busiest = cost != nullptr ? cost->busiest_rank : -1;
  for (const Batch& batch : plan.batches.ranks) {
    const int tid = trace_tid(batch.rank, TraceStream::kCompute);
    if (batch.empty()) {
      // An idle rank still runs the step (every MoE layer waits for all ranks). Its span is written at op
      // detail only: at step detail a lightly loaded dp8 run would write ~3x the spans.
      if (detail_ == TraceDetail::kOp)
        trace_.complete(pid, tid, "step", start_s, outcome.duration_s,
                        {{"step", step}, {"tokens", 0}, {"requests", 0}});
      continue;
    }
    const auto requests = static_cast<int64_t>(batch.entries.size());
    const auto r = static_cast<size_t>(batch.rank);
    const std::span<const int32_t> accepted = r < outcome.accepted_drafts.size()
                                                  ? std::span<const int32_t>(outcome.accepted_drafts[r])
                                                  : std::span<const int32_t>();
    if (batch.rank == busiest) {
      const std::initializer_list<TraceArg> args = {{"step", step},
                                                    {"tokens", batch.total_tokens()},
                                                    {"requests", requests},
                                                    {"weights_ns", to_ns(cost->weights_s)},
                                                    {"kv_ns", to_ns(cost->kv_s)},
                                                    {"indexer_ns", to_ns(cost->indexer_s)},
                                                    {"compute_ns", to_ns(cost->compute_s)},
                                                    {"comm_ns", to_ns(cost->comm_s)},
                                                    {"launch_ns", to_ns(cost->launch_s)}};
      step_span(pid, tid, batch, accepted, start_s, outcome.duration_s, args);
    } else {
      step_span(pid, tid, batch, accepted, start_s, outcome.duration_s,
                {{"step", step}, {"tokens", batch.total_tokens()}, {"requests", requests}});
    }
  }
  if (detail_ == TraceDetail::kOp) {
    for (const OpSpan& op : outcome.ops) {
      const TraceStream stream = op.stream == Stream::kComm ? TraceStream::kComm : TraceStream::kCompute;
      if (op.source != nullptr) {
        trace_.complete(pid, trace_tid(op.rank, stream), op.name, start_s + op.start_s, op.duration_s, {},
                        TraceText{"source", op.source});
      } else {
        trace_.complete(pid, trace_tid(op.rank, stream), op.name, start_s + op.start_s, op.duration_s);
      }
    }
  }
}

void Recorder::set_role(int32_t instance, InstanceRole role) {
  const auto i = static_cast<size_t>(instance);
  roles_[i] = role;
  const char* name = nullptr;
  switch (role) {
    case InstanceRole::kColocated:
      return;  // describe_instance's name says it all
    case InstanceRole::kPrefillOnly:
      name = "prefill";
      break;
    case InstanceRole::kDecodeOnly:
      name = "decode";
      break;
  }
  // The process says its PD role (the later name event is the one viewers show).
  trace_.process_name(pid_of(instance),
                      "instance " + std::to_string(instance) + " " + name + " (" + parallel_names_[i] + ")");
}

void Recorder::on_handoff(const RequestRecord& record, int32_t prefill_instance) {
  ++events_;
  auto it = live_.find(record.id);
  if (it == live_.end() || !it->second.traced) return;
  trace_.async_end(pid_of(prefill_instance), kRequestCategory, record.id, request_span_name(record.id),
                   record.finish_s);
}

void Recorder::on_kv_transfer(RequestId id, int32_t prefill_instance, int32_t decode_instance, double start_s,
                              double end_s, double bytes) {
  ++events_;
  auto it = live_.find(id);
  if (it == live_.end() || !it->second.traced) return;
  RequestTrace& rt = it->second;
  const int ppid = pid_of(prefill_instance), dpid = pid_of(decode_instance);
  trace_.async_begin(ppid, kRequestCategory, id, "kv_transfer", start_s,
                     {{"bytes", static_cast<int64_t>(bytes + 0.5)}, {"to_instance", decode_instance}});
  trace_.async_end(ppid, kRequestCategory, id, "kv_transfer", end_s);
  trace_.flow_begin(ppid, trace_tid(rt.last_chunk_rank, TraceStream::kCompute), id, rt.last_chunk_start_s);
  trace_.async_begin(dpid, kRequestCategory, id, request_span_name(id), end_s);
  rt.queued_name = "queued";
  trace_.async_begin(dpid, kRequestCategory, id, rt.queued_name, end_s);
  rt.phase = Phase::kQueued;
  rt.flow_pending = true;
}

void Recorder::on_record(const RequestRecord& record, int32_t instance) {
  write_record(record, instance, instance, nullptr);
}

void Recorder::on_record(const RequestRecord& record, int32_t instance, const PdHop& hop) {
  write_record(record, instance, hop.decode_instance >= 0 ? hop.decode_instance : instance, &hop);
}

void Recorder::write_record(const RequestRecord& record, int32_t instance, int32_t trace_instance,
                            const PdHop* hop) {
  ++events_;
  const int pid = pid_of(trace_instance);
  const bool completed = record.status == RequestStatus::kFinished;
  auto it = live_.find(record.id);
  if (it != live_.end() && it->second.traced) {
    switch (it->second.phase) {
      case Phase::kQueued:
        trace_.async_end(pid, kRequestCategory, record.id, it->second.queued_name, record.finish_s);
        break;
      case Phase::kRunning:
        break;
      case Phase::kDecoding:
        trace_.async_end(pid, kRequestCategory, record.id, "decode", record.finish_s);
        break;
    }
    trace_.async_end(pid, kRequestCategory, record.id, request_span_name(record.id), record.finish_s);
  }
  const bool warmup = it != live_.end() && it->second.warmup;
  if (it != live_.end()) live_.erase(it);
  const std::vector<double>& times = record.token_times_s;
  for (size_t i = 1; !warmup && i < times.size(); ++i) {
    const double gap = times[i] - times[i - 1];
    if (gap > 0) metrics_.on_token_gap(gap);  // MTP tokens of one step share a time: one chunk, one gap
  }
  RequestRow row;
  row.id = record.id;
  row.arrival_s = record.arrival_s;
  row.first_token_s = record.first_token_s;
  row.finish_s = record.finish_s;
  if (row.first_token_s >= 0 && first_token_latency_s_ > 0) {
    row.first_token_s += first_token_latency_s_;
    row.finish_s = std::max(row.finish_s, row.first_token_s);  // the last token comes no sooner
  }
  row.input_tokens = record.prompt_tokens;
  row.generated_tokens = record.generated_tokens;
  row.cached_tokens = record.cached_tokens;
  row.preemptions = record.preemptions;
  row.retractions = record.retractions;
  row.instance = instance;
  row.completed = completed;
  row.warmup = warmup;
  if (hop != nullptr && hop->decode_instance >= 0) {
    row.decode_instance = hop->decode_instance;
    row.kv_transfer_bytes = hop->transfer_bytes;
    row.kv_transfer_s = hop->transfer_s;
  }
  row.status = completed                                   ? std::string_view("completed")
               : record.status == RequestStatus::kRejected ? to_string(record.reject_reason)
                                                           : to_string(record.status);
  metrics_.on_request(row);
  csv_.write(row);
}

bool Recorder::finish(const RunInfo& info, std::string* why) {
  progress_.finish(info.simulated_s, metrics_.arrived(), metrics_.completed() + metrics_.rejected());
  RunInfo run = info;
  run.events = events_;
  run.warmup_requests = warmup_requests_;
  if (run.configuration_json.empty()) run.configuration_json = configuration_json_;
  OutputFile metrics_file(out_path(dir_, "metrics.json"));
  metrics_file.buffer() = metrics_.to_json(run);
  // metrics.json last, and only beside the others: it is what says a run's outputs are complete.
  const bool csv_ok = csv_.finish();
  const bool trace_ok = csv_ok && trace_.finish();
  const bool metrics_ok = trace_ok && metrics_file.commit();
  if (csv_ok && trace_ok && metrics_ok) {
    remove_stale_traces();
    return true;
  }
  *why = std::string("could not write ") +
         (!csv_ok     ? "requests.csv"
          : !trace_ok ? trace_name_
                      : "metrics.json") +
         " in " + dir_;
  return false;
}

void Recorder::remove_stale_traces() const {
  // An earlier run's trace in the other form would sit beside outputs it does not describe.
  for (const char* name : {"trace.json", "trace.json.gz"}) {
    if (trace_name_ == nullptr || std::string_view(name) != trace_name_)
      std::remove(out_path(dir_, name).c_str());
  }
}

}  // namespace tokenline
