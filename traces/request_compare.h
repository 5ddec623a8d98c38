// RequestComparison: a predicted run's requests.csv joined with a measured run's, request by request
// (docs/architecture.md: sim and real "compared ... request by request"). Rows join on the request
// id; rows on one side only are counted. For requests that completed on both sides: TTFT (first token -
// arrival) and E2E (finish - arrival), their means and the relative error |pred - meas| / meas per request
// (MAPE, p50, p90; nearest rank); and how many requests ended differently (status), hit the prefix cache
// differently (cached tokens) or were preempted a different number of times - outcomes of decisions, so
// nonzero counts say the runs decided differently.
// read_requests_csv reads a tokenline requests.csv by its header; InputError names file and line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace_compare.h"

namespace tokenline {

struct RecordedRequest {
  int64_t id = 0;
  double arrival_s = 0, first_token_s = -1, finish_s = 0;
  int64_t input_tokens = 0, generated_tokens = 0, cached_tokens = 0;  // generated: the CSV's output_tokens
  int64_t preemptions = 0;
  std::string status;  // "completed" or a rejection reason
};

std::vector<RecordedRequest> read_requests_csv(const std::string& path);

// A latency over the requests completed on both sides.
struct LatencyComparison {
  std::string name;  // "ttft", "e2e"
  int64_t requests = 0;
  double predicted_mean_s = 0, measured_mean_s = 0;
  RelativeError error;
};

struct RequestComparison {
  int64_t joined = 0, predicted_only = 0, measured_only = 0;
  int64_t completed_both = 0;
  int64_t status_differs = 0, cached_differs = 0, preemptions_differ = 0;
  LatencyComparison ttft, e2e;
};

RequestComparison compare_requests(const std::vector<RecordedRequest>& predicted,
                                   const std::vector<RecordedRequest>& measured);

}  // namespace tokenline
