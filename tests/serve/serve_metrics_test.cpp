#include "serve/serve_metrics.h"

#include <catch2/catch.hpp>

namespace tokenline {

TEST_CASE("serve metrics render vLLM's names with cumulative histogram buckets", "[runtime][metrics]") {
  ServeMetrics m("tiny");
  InstanceCounters c;
  c.running = 3;
  c.waiting = 2;
  c.kv.total_pages = 100;
  c.kv.used_pages = 25;
  c.kv.free_pages = 70;
  c.kv.evictable_pages = 5;
  c.kv.prefix_query_tokens = 1000;
  c.kv.prefix_hit_tokens = 640;
  m.on_step(c);
  RequestRecord r;
  r.arrival_s = 1.0;
  r.first_token_s = 1.03;  // TTFT 30 ms: in the 0.04 bucket, not in 0.02
  r.finish_s = 1.52;       // 10 tokens after the first: TPOT 49 ms
  r.prompt_tokens = 41;
  r.generated_tokens = 11;
  m.on_finished(r, "length");
  RequestRecord cancelled;
  m.on_finished(cancelled, "abort");
  const std::string text = m.render(HttpGauges{.open_connections = 4, .busy_workers = 1, .threads = 257});
  CHECK(text.find("vllm:num_requests_running{model_name=\"tiny\"} 3\n") != std::string::npos);
  CHECK(text.find("vllm:num_requests_waiting{model_name=\"tiny\"} 2\n") != std::string::npos);
  CHECK(text.find("vllm:kv_cache_usage_perc{model_name=\"tiny\"} 0.25\n") != std::string::npos);
  CHECK(text.find("vllm:prefix_cache_hits_total{model_name=\"tiny\"} 640\n") != std::string::npos);
  CHECK(text.find("vllm:prompt_tokens_total{model_name=\"tiny\"} 41\n") != std::string::npos);
  CHECK(text.find("vllm:generation_tokens_total{model_name=\"tiny\"} 11\n") != std::string::npos);
  CHECK(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"0.02\"} 0\n") !=
        std::string::npos);
  CHECK(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"0.04\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("vllm:time_to_first_token_seconds_bucket{model_name=\"tiny\",le=\"+Inf\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("vllm:time_per_output_token_seconds_bucket{model_name=\"tiny\",le=\"0.05\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("vllm:request_success_total{model_name=\"tiny\",finished_reason=\"abort\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("tokenline:kv_pages_free{model_name=\"tiny\"} 75\n") != std::string::npos);
  CHECK(text.find("tokenline:http_threads{model_name=\"tiny\"} 257\n") != std::string::npos);
  CHECK(m.free_pages() == 75);
}

TEST_CASE("a model name cannot break out of its Prometheus label", "[serve][metrics]") {
  CHECK(prometheus_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  ServeMetrics m("evil\"} 1\nfake_metric{x=\"");
  const std::string text = m.render(HttpGauges{});
  CHECK(text.find("\nfake_metric") == std::string::npos);
  CHECK(text.find("model_name=\"evil\\\"} 1\\nfake_metric{x=\\\"\"") != std::string::npos);
}

}  // namespace tokenline
