#include "sim/backends/cluster_hardware.h"

#include "topologies/cluster_loader.h"

namespace tokenline {

ClusterHardware load_cluster_hardware(const std::string& name_or_path) {
  const Cluster cluster = load_cluster(name_or_path);
  return ClusterHardware{.name = cluster.name(), .hardware = cluster.hardware(), .gpus = cluster.gpu_count()};
}

}  // namespace tokenline
