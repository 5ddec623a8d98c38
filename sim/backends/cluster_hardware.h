// The parts of a cluster description the driver needs (its hardware, name and GPU count), read in a
// translation unit of its own: topologies/cluster.h and engine/model/ledger.h both declare a
// tokenline::Link (a struct and an enum) and cannot be included together.
#pragma once

#include <string>

#include "topologies/hardware.h"

namespace tokenline {

struct ClusterHardware {
  std::string name;
  Hardware hardware;
  int gpus = 0;
};

// Loads a cluster preset or JSON file; throws InputError as load_cluster does.
ClusterHardware load_cluster_hardware(const std::string& name_or_path);

}  // namespace tokenline
