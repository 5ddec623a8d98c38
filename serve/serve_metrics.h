// ServeMetrics: the Prometheus text of `tokenline serve`'s GET /metrics. vLLM's names (`vllm:` prefix,
// with the `_total` counters prometheus_client writes) wherever vLLM has the metric, so vLLM dashboards
// and alerts read it unchanged; `tokenline:` for what vLLM lacks (page counts, HTTP pool, 503s).
// Thread-safe: the engine thread reports steps and finished requests, workers count and render.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/instance.h"

namespace tokenline {

// A cumulative Prometheus histogram over fixed upper bounds (+Inf implied).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size(), 0) {}
  void observe(double v);
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bound (not cumulative)
  int64_t count_ = 0;
  double sum_ = 0;
};

// What the HTTP side adds to each render.
struct HttpGauges {
  int64_t open_connections = 0;
  int64_t busy_workers = 0;
  int32_t threads = 0;
  bool draining = false;
};

class ServeMetrics {
 public:
  explicit ServeMetrics(std::string model_name);
  // Engine thread, after each step.
  void on_step(const InstanceCounters& counters);
  // Engine thread, once per request that left; reason: "stop", "length", "abort", ...
  void on_finished(const RequestRecord& record, std::string_view reason);
  void on_overload();  // a 503 for --max-queued or a full worker pool
  std::string render(const HttpGauges& http) const;
  int64_t running() const;
  int64_t waiting() const;
  int64_t free_pages() const;

 private:
  std::string labels_;  // model_name="..."
  mutable std::mutex mutex_;
  InstanceCounters engine_;
  int64_t prompt_tokens_ = 0, generation_tokens_ = 0, overloads_ = 0;
  int64_t finished_stop_ = 0, finished_length_ = 0, finished_abort_ = 0, finished_other_ = 0;
  Histogram ttft_s_, tpot_s_, e2e_s_;
};

// A Prometheus label value (text exposition format 0.0.4): backslash, double quote and line feed escaped,
// so a served model name cannot end its label or its line.
std::string prometheus_label_value(std::string_view text);

}  // namespace tokenline
