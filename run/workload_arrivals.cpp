#include "run/workload_arrivals.h"

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
