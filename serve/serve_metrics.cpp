#include "serve/serve_metrics.h"

#include <cstdio>

namespace tokenline {
namespace {

// vLLM's buckets (vllm/v1/metrics/loggers.py), so histogram_quantile queries compare across servers.
const std::vector<double> kTtftBounds = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,  0.75,
                                         1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160., 640., 2560.};
const std::vector<double> kTpotBounds = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kE2eBounds = {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,  2.5,   5.0,   10.0,   15.0,  20.0,
                                        30.0, 40.0, 50.0, 60.0, 120., 240., 480.0, 960.0, 1920.0, 7680.0};

std::string number(double v) {
  char text[48];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

void line(std::string& out, const std::string& name, const std::string& labels, double v) {
  out += name + "{" + labels + "} " + number(v) + "\n";
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void Histogram::observe(double v) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (v <= bounds_[i]) {
      ++counts_[i];
      break;
    }
  }
  ++count_;
  sum_ += v;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{" + labels + ",le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) +
           "\n";
  }
  out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum{" + labels + "} " + number(sum_) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

std::string prometheus_label_value(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

ServeMetrics::ServeMetrics(std::string model_name)
    : labels_("model_name=\"" + prometheus_label_value(model_name) + "\""),
      ttft_s_(kTtftBounds),
      tpot_s_(kTpotBounds),
      e2e_s_(kE2eBounds) {}

void ServeMetrics::on_step(const InstanceCounters& counters) {
  const std::lock_guard<std::mutex> lock(mutex_);
  engine_ = counters;
}

void ServeMetrics::on_finished(const RequestRecord& r, std::string_view reason) {
  const std::lock_guard<std::mutex> lock(mutex_);
  int64_t& bucket = reason == "stop"     ? finished_stop_
                    : reason == "length" ? finished_length_
                    : reason == "abort"  ? finished_abort_
                                         : finished_other_;
  ++bucket;
  if (r.first_token_s < 0) return;  // rejected or never scheduled: no latency to report
  prompt_tokens_ += r.prompt_tokens;
  generation_tokens_ += r.generated_tokens;
  ttft_s_.observe(r.first_token_s - r.arrival_s);
  if (r.generated_tokens > 1 && r.finish_s >= r.first_token_s)
    tpot_s_.observe((r.finish_s - r.first_token_s) / static_cast<double>(r.generated_tokens - 1));
  if (r.finish_s >= r.arrival_s) e2e_s_.observe(r.finish_s - r.arrival_s);
}

void ServeMetrics::on_overload() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++overloads_;
}

int64_t ServeMetrics::running() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return engine_.running;
}

int64_t ServeMetrics::waiting() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return engine_.waiting;
}

int64_t ServeMetrics::free_pages() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return engine_.kv.free_pages + engine_.kv.evictable_pages;
}

std::string ServeMetrics::render(const HttpGauges& http) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  const KvCounters& kv = engine_.kv;
  const double usage =
      kv.total_pages > 0 ? static_cast<double>(kv.used_pages) / static_cast<double>(kv.total_pages) : 0;
  auto gauge = [&](const char* name, const char* help, double v) {
    header(out, name, "gauge", help);
    line(out, name, labels_, v);
  };
  auto counter = [&](const char* name, const char* help, double v) {
    header(out, name, "counter", help);
    line(out, name, labels_, v);
  };
  gauge("vllm:num_requests_running", "Requests in the batch (prefilling or decoding).",
        static_cast<double>(engine_.running));
  gauge("vllm:num_requests_waiting", "Requests queued in the engine.", static_cast<double>(engine_.waiting));
  gauge("vllm:kv_cache_usage_perc", "Fraction of KV pages in use (1 = 100%).", usage);
  gauge("vllm:gpu_cache_usage_perc", "vLLM v0's name of vllm:kv_cache_usage_perc.", usage);
  counter("vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
          static_cast<double>(kv.prefix_query_tokens));
  counter("vllm:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.",
          static_cast<double>(kv.prefix_hit_tokens));
  counter("vllm:num_preemptions_total", "Preemptions (recompute).", static_cast<double>(engine_.preemptions));
  counter("vllm:prompt_tokens_total", "Prompt tokens of finished requests.",
          static_cast<double>(prompt_tokens_));
  counter("vllm:generation_tokens_total", "Generated tokens of finished requests.",
          static_cast<double>(generation_tokens_));
  header(out, "vllm:request_success_total", "counter", "Requests that left, by finish reason.");
  line(out, "vllm:request_success_total", labels_ + ",finished_reason=\"stop\"",
       static_cast<double>(finished_stop_));
  line(out, "vllm:request_success_total", labels_ + ",finished_reason=\"length\"",
       static_cast<double>(finished_length_));
  line(out, "vllm:request_success_total", labels_ + ",finished_reason=\"abort\"",
       static_cast<double>(finished_abort_));
  header(out, "vllm:time_to_first_token_seconds", "histogram", "Time to first token.");
  ttft_s_.render(out, "vllm:time_to_first_token_seconds", labels_);
  header(out, "vllm:time_per_output_token_seconds", "histogram",
         "Mean time per output token after the first.");
  tpot_s_.render(out, "vllm:time_per_output_token_seconds", labels_);
  header(out, "vllm:e2e_request_latency_seconds", "histogram", "Arrival to last token.");
  e2e_s_.render(out, "vllm:e2e_request_latency_seconds", labels_);
  gauge("tokenline:kv_pages_total", "KV pages of the instance.", static_cast<double>(kv.total_pages));
  gauge("tokenline:kv_pages_free", "KV pages free or evictable.",
        static_cast<double>(kv.free_pages + kv.evictable_pages));
  counter("tokenline:requests_rejected_total", "Requests the core refused or left unscheduled.",
          static_cast<double>(finished_other_));
  counter("tokenline:http_overloaded_total", "503 replies: --max-queued or a full worker pool.",
          static_cast<double>(overloads_));
  gauge("tokenline:http_open_connections", "Open client connections.",
        static_cast<double>(http.open_connections));
  gauge("tokenline:http_busy_workers", "Workers serving a request.", static_cast<double>(http.busy_workers));
  gauge("tokenline:http_threads", "HTTP threads (poller + workers).", static_cast<double>(http.threads));
  gauge("tokenline:draining", "1 while shutting down.", http.draining ? 1 : 0);
  return out;
}

}  // namespace tokenline
