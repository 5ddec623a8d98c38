#include "run/workload_arrivals.h"

#include <cmath>
#include <optional>

#include "common/input_error.h"

namespace tokenline {
std::unique_ptr<WorkloadSource> open_workload_source(const WorkloadSpec& spec) {
  return open_workload(spec.spec.empty() ? "default" : spec.spec, spec.options);
}

std::string describe_workload(const WorkloadSpec& spec) {
  return open_workload_source(spec)->describe();
}

void prevalidate_workload(const WorkloadSpec& spec) {
  std::unique_ptr<WorkloadSource> source = open_workload_source(spec);
  while (source->next()) {
  }
}

double native_rate_rps(const WorkloadSpec& spec) {
  WorkloadSpec native = spec;
  native.options.window = WindowOptions{.max_requests = spec.options.window.max_requests};
  std::unique_ptr<WorkloadSource> source = open_workload_source(native);
  int64_t requests = 0;
  double first_s = 0, last_s = 0;
  while (std::optional<WorkloadRequest> w = source->next()) {
    if (requests++ == 0) first_s = w->arrival_s;
    last_s = w->arrival_s;  // arrivals are sorted (workload_window.h)
  }
  return requests > 1 && last_s > first_s ? static_cast<double>(requests - 1) / (last_s - first_s) : 0.0;
}

double time_scale_for_rate(double native_rps, double rate_rps) {
  if (!(rate_rps > 0) || !std::isfinite(rate_rps))
    throw InputError("--rate", "a positive, finite request rate (requests per second)",
                     std::to_string(rate_rps));
  if (native_rps <= 0)
    throw InputError("--rate", "a workload with at least two requests at different times to rescale",
                     "a workload without an arrival rate");
  return native_rps / rate_rps;
}

bool WorkloadArrivals::next(TimedRequest& out) {
  std::optional<WorkloadRequest> w = source_->next();
  if (!w) return false;
  out.arrival_s = w->arrival_s;
  RequestSpec& s = out.spec;
  s.id = w->id;
  s.prompt_tokens = w->input_tokens;
  s.output_tokens = w->output_tokens;
  s.priority = w->priority;  // larger = more urgent, in the workload and in the core alike
  s.token_ids.clear();
  s.block_hashes.assign(w->block_hashes.begin(), w->block_hashes.end());
  s.block_tokens = w->block_tokens > 0 ? w->block_tokens : s.block_tokens;
  return true;
}

std::unique_ptr<ArrivalSource> open_arrivals(const WorkloadSpec& spec) {
  return std::make_unique<WorkloadArrivals>(open_workload_source(spec));
}

}  // namespace tokenline
