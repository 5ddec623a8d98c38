#include "sim/driver/executor_factory.h"

#include <string>

#include "common/input_error.h"
#include "sim/backends/analytic_backend.h"
#include "sim/backends/simgrid_backend.h"
#include "sim/simgrid/simgrid_platform.h"

namespace tokenline {
namespace {

std::unique_ptr<SimExecutor> make_simgrid(const SimConfig& config, const CostModel& cm, int32_t index,
                                          const sg::PlatformSpec& platform, LinkMeter* meter,
                                          int& first_gpu) {
  if (first_gpu + cm.parallel.gpus() > platform.gpu_count()) {
    throw InputError(
        "--cluster " + config.cluster_source,
        "at least " + std::to_string(first_gpu + cm.parallel.gpus()) + " GPUs for --backend simgrid",
        std::to_string(platform.gpu_count()) + " GPUs");
  }
  auto simgrid = std::make_unique<SimgridBackend>(cm, platform, first_gpu,
                                                  config.output.trace_detail == TraceDetail::kOp,
                                                  config.overlap, config.noise, config.seed, index);
  simgrid->set_meter(meter);
  first_gpu += cm.parallel.gpus();
  return simgrid;
}

}  // namespace

std::unique_ptr<SimExecutor> make_executor(const SimConfig& config, const CostModel& cm, int32_t index,
                                           const sg::PlatformSpec* platform, LinkMeter* meter,
                                           int& first_gpu) {
  switch (config.backend) {
    case Backend::kAnalytic:
      return std::make_unique<AnalyticBackend>(cm, config.output.trace_detail == TraceDetail::kOp,
                                               config.noise, config.seed, index);
    case Backend::kSimgrid:
      return make_simgrid(config, cm, index, *platform, meter, first_gpu);
  }
  return nullptr;
}

}  // namespace tokenline
