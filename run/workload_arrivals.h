// Workload side of the driver: names a workload (--workload), opens it as a streaming ArrivalSource,
// checks it in a first streaming pass (so a malformed line stops the run before simulating), and turns
// each WorkloadRequest into the core's RequestSpec (Mooncake hash ids become prefix block hashes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/core/arrival_source.h"
#include "workloads/workload_loader.h"

namespace tokenline {

struct WorkloadSpec {
  std::string spec;             // as workloads/workload_loader.h reads it; "" = the embedded default; or a
                                // session workload: sessions:<path> | synthetic-sessions:<spec>
  WorkloadOptions options;      // --skip-bad-lines, the window (--time-scale, --start, --duration,
                                // --max-requests, closed loop) and the seed of synthetic generators
  int32_t session_clients = 0;  // a session workload: sessions live at once (--concurrency; 0: no cap)
  int64_t warmup_requests = 0;  // --warmup (a session workload refuses it)
};

// True for sessions:<path> and synthetic-sessions:<spec> (run/session_arrivals.h: closed-loop, played
// against completions).
bool is_session_workload(const std::string& spec);

// Opens the workload (open_workload); throws InputError when it cannot be opened or named. A session
// workload is not a request stream: open_arrivals opens it.
std::unique_ptr<WorkloadSource> open_workload_source(const WorkloadSpec& spec);
std::string describe_workload(const WorkloadSpec& spec);
// Reads the whole workload once (streaming) and throws the first malformed line's InputError.
void prevalidate_workload(const WorkloadSpec& spec);
// The workload's own arrival rate, requests per second over its arrival span ((n - 1) / (last - first)),
// of the requests the window keeps at time scale 1 from the start (its --max-requests only); 0 with fewer
// than two requests or all at one time. One streaming pass (bad lines as the options say).
double native_rate_rps(const WorkloadSpec& spec);
// --rate R: the time scale that puts the workload's arrivals at R requests per second (a Poisson
// generator stays Poisson, a trace keeps its burst shape). Throws InputError naming --rate when the
// workload has no rate to rescale (fewer than two requests, or all at one time).
double time_scale_for_rate(double native_rps, double rate_rps);

// Adapts a WorkloadSource to the driver's ArrivalSource.
class WorkloadArrivals final : public ArrivalSource {
 public:
  explicit WorkloadArrivals(std::unique_ptr<WorkloadSource> source) : source_(std::move(source)) {}
  bool next(TimedRequest& out) override;
  int64_t skipped_lines() const override { return source_->skipped_lines(); }

 private:
  std::unique_ptr<WorkloadSource> source_;
};

std::unique_ptr<ArrivalSource> open_arrivals(const WorkloadSpec& spec);

}  // namespace tokenline
