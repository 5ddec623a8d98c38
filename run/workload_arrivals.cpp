#include "run/workload_arrivals.h"

#include <cmath>
#include <optional>

#include "common/input_error.h"
#include "run/session_arrivals.h"
#include "workloads/session_generator.h"
#include "workloads/session_reader.h"

namespace tokenline {
namespace {

constexpr std::string_view kSessionFile = "sessions:";
constexpr std::string_view kSessionGenerator = "synthetic-sessions:";

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// A session workload is paced by its clients and think times: the request-trace window does not apply.
void check_session_options(const WorkloadSpec& spec) {
  const WindowOptions& w = spec.options.window;
  const std::string why = "with a session workload (its clients and think times pace it)";
  if (w.time_scale != 1.0)
    throw InputError("--time-scale / --rate", "none " + why, std::to_string(w.time_scale));
  if (w.start_s != 0) throw InputError("--start", "none " + why, std::to_string(w.start_s));
  if (w.duration_s != WindowOptions{}.duration_s)
    throw InputError("--duration", "none " + why, std::to_string(w.duration_s));
  if (w.max_requests >= 0) throw InputError("--max-requests", "none " + why, std::to_string(w.max_requests));
  if (spec.options.reader.skip_bad_lines) throw InputError("--skip-bad-lines", "none " + why, "given");
  if (spec.warmup_requests > 0)
    throw InputError("--warmup", "none " + why, std::to_string(spec.warmup_requests));
  if (spec.session_clients < 0)
    throw InputError("--concurrency", "0 or a positive client count", std::to_string(spec.session_clients));
}

std::unique_ptr<SessionSource> open_session_source(const WorkloadSpec& spec) {
  check_session_options(spec);
  if (starts_with(spec.spec, kSessionGenerator))
    return std::make_unique<SessionGenerator>(
        parse_session_generator_spec(std::string_view(spec.spec).substr(kSessionGenerator.size())),
        spec.options.seed);
  return std::make_unique<SessionReader>(LineReader::open_file(spec.spec.substr(kSessionFile.size())));
}

}  // namespace

bool is_session_workload(const std::string& spec) {
  return starts_with(spec, kSessionFile) || starts_with(spec, kSessionGenerator);
}

std::unique_ptr<WorkloadSource> open_workload_source(const WorkloadSpec& spec) {
  return open_workload(spec.spec.empty() ? "default" : spec.spec, spec.options);
}

std::string describe_workload(const WorkloadSpec& spec) {
  if (is_session_workload(spec.spec)) return open_session_source(spec)->describe();
  return open_workload_source(spec)->describe();
}

void prevalidate_workload(const WorkloadSpec& spec) {
  if (is_session_workload(spec.spec)) {
    std::unique_ptr<SessionSource> sessions = open_session_source(spec);
    while (sessions->next()) {
    }
    return;
  }
  std::unique_ptr<WorkloadSource> source = open_workload_source(spec);
  while (source->next()) {
  }
}

double native_rate_rps(const WorkloadSpec& spec) {
  if (is_session_workload(spec.spec))
    throw InputError("--rate", "a request trace (a session workload is paced by its clients and think times)",
                     spec.spec);
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
  if (is_session_workload(spec.spec))
    return std::make_unique<SessionArrivals>(open_session_source(spec), spec.session_clients);
  return std::make_unique<WorkloadArrivals>(open_workload_source(spec));
}

}  // namespace tokenline
