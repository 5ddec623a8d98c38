// RequestRow: what the outputs keep of one request once it has left the system (finished or rejected).
// Built by the driver from the core's finished request, consumed at once by the metrics aggregator and the
// requests.csv writer, then dropped: nothing holds finished requests.
#pragma once

#include <cstdint>
#include <string_view>

namespace tokenline {

struct RequestRow {
  int64_t id = 0;
  double arrival_s = 0;
  double first_token_s = -1;  // < 0 when no token was produced (rejected)
  double finish_s = 0;        // completion, or the rejection time
  int64_t input_tokens = 0;
  int64_t generated_tokens = 0;  // tokens generated (0 for a rejected request); requests.csv's output_tokens
  int64_t cached_tokens = 0;     // prompt tokens served from the prefix cache at admission
  int32_t preemptions = 0;       // recompute requeues, retractions included
  int32_t retractions = 0;       // of those, SGLang-style retractions (decode out of KV)
  int32_t instance = -1;         // instance that served it; -1 when rejected before routing
  bool completed = false;
  bool warmup = false;  // of a closed loop's warm-up phase (sim --warmup): left out of latency_ms and goodput
  std::string_view status = "completed";  // "completed" or a rejection reason; static storage
  // PD disaggregation (instance is then the prefill instance); -1 / 0 / -1 when not disaggregated.
  int32_t decode_instance = -1;
  double kv_transfer_bytes = 0;  // KV + indexer cache handed from prefill to decode
  double kv_transfer_s = -1;     // the transfer's duration (< 0: no transfer)
};

// Time per output token after the first, the TPOT of one request: (finish - first token) / (output - 1);
// 0 with fewer than 2 output tokens (no TPOT).
inline double request_tpot_s(double first_token_s, double finish_s, int64_t generated_tokens) {
  return generated_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(generated_tokens - 1) : 0.0;
}

}  // namespace tokenline
