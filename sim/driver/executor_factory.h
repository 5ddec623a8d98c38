// make_executor: the executor an instance's steps run on in simulation, chosen by --backend: the analytic
// cost model, or activities on the SimGrid platform (simgrid). A replay (--backend replay:) is a
// ReplayBackend built from the recorded instance by the driver.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/backends/sim_executor.h"
#include "sim/driver/sim_config.h"

namespace tokenline {

namespace sg {
struct PlatformSpec;
}
class LinkMeter;

// Instance `index`'s executor. --backend simgrid (REQUIRES platform): the instance takes the platform's GPUs
// from first_gpu on (advanced past them) and reports its link bytes to meter; throws InputError naming the
// cluster when too few GPUs remain. REQUIRES: cm (and platform, meter) outlive the executor.
std::unique_ptr<SimExecutor> make_executor(const SimConfig& config, const CostModel& cm, int32_t index,
                                           const sg::PlatformSpec* platform, LinkMeter* meter,
                                           int& first_gpu);

}  // namespace tokenline
