#include "workloads/workload_window.h"

#include <cmath>
#include <utility>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"

namespace tokenline {

WindowedSource::WindowedSource(std::unique_ptr<WorkloadSource> inner, WindowOptions options)
    : inner_(std::move(inner)), options_(options) {}

std::optional<WorkloadRequest> WindowedSource::next() {
  while (!done_) {
    if (options_.max_requests >= 0 && emitted_ >= options_.max_requests) break;
    std::optional<WorkloadRequest> r = inner_->next();
    if (!r) break;
    r->arrival_s *= options_.time_scale;
    if (r->arrival_s < options_.start_s) continue;
    if (r->arrival_s - options_.start_s >= options_.duration_s) break;
    if (!(r->arrival_s <= limits::kMaxArrivalS)) {
      throw InputError(inner_->describe() + ": request " + std::to_string(r->id) + " arrival",
                       "a time <= " + number_text(limits::kMaxArrivalS) + " s after --time-scale " +
                           number_text(options_.time_scale) + " (int64 nanoseconds of virtual time)",
                       number_text(r->arrival_s) + " s");
    }
    r->arrival_s = options_.closed_loop ? 0.0 : r->arrival_s - options_.start_s;
    r->id = emitted_++;
    return r;
  }
  done_ = true;
  return std::nullopt;
}

void check_window(const WindowOptions& o) {
  if (!(o.time_scale > 0) || !std::isfinite(o.time_scale))
    throw InputError("--time-scale", "a number > 0", number_text(o.time_scale));
  if (!(o.start_s >= 0) || !std::isfinite(o.start_s))
    throw InputError("--start", "a time >= 0 s", number_text(o.start_s));
  if (!(o.duration_s > 0)) throw InputError("--duration", "a time > 0 s", number_text(o.duration_s));
  if (o.max_requests < -1) throw InputError("--max-requests", "a count >= 0", std::to_string(o.max_requests));
}

}  // namespace tokenline
