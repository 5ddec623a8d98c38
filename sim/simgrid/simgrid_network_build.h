// Internal to the SimGrid seam (simgrid_adapter.cpp, simgrid_network.cpp): builds the platform's zone
// and returns the host the driver's actors run on. Call once, after the network config, before run().
#pragma once

#include <simgrid/s4u.hpp>

#include "sim/simgrid/simgrid_platform.h"

namespace tokenline::sg {

simgrid::s4u::Host* build_network(const PlatformSpec& spec);

}  // namespace tokenline::sg
