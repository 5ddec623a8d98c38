// Cluster: GPUs, switches and NICs joined by links (a graph built from topologies/clusters/<name>.json).
// Immutable after construction; queries are const and thread-compatible. Boost.Graph stays in cluster.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "topologies/hardware.h"

namespace tokenline {

enum class DeviceKind { kGpu, kNvSwitch, kNic, kLeafSwitch, kSpineSwitch };
enum class LinkKind { kNvlink, kPcie, kIb };

const char* to_string(DeviceKind kind);
const char* to_string(LinkKind kind);

struct Device {
  int id = 0;  // index into Cluster::devices()
  DeviceKind kind = DeviceKind::kGpu;
  std::string name;  // "node0/gpu3", "node1/nic3", "leaf3", "spine0"
  int node = -1;     // node index; -1 for fabric switches shared by nodes
  int gpu = -1;      // global GPU rank (node * gpus_per_node + local) for kGpu, else -1
};

// One physical link, full duplex: `bw_per_direction` each way at once (SimGrid SPLITDUPLEX).
struct Link {
  int id = 0;  // index into Cluster::links()
  LinkKind kind = LinkKind::kNvlink;
  std::string name;  // "node0/gpu3-nvswitch"
  int a = 0;         // device ids of the two ends
  int b = 0;
  double bw_per_direction = 0;  // bytes/s
  double latency_s = 0;
};

// The links a transfer crosses from one GPU to another, in order.
struct Route {
  std::vector<int> link_ids;
  double bottleneck_bw = 0;  // min bw_per_direction over the links (+inf for an empty route)
  double latency_s = 0;      // sum of the links' latencies
  bool crosses(LinkKind kind, const std::vector<Link>& links) const;
};

class Cluster {
 public:
  // REQUIRES: ids are dense indices; every link's ends are valid device ids; every GPU has a node.
  Cluster(std::string name, Hardware hardware, int node_count, std::vector<Device> devices,
          std::vector<Link> links);
  Cluster(Cluster&&) noexcept;
  Cluster& operator=(Cluster&&) noexcept;
  ~Cluster();

  const std::string& name() const;
  const Hardware& hardware() const;
  int node_count() const;
  int gpu_count() const;
  std::vector<int> gpus_of_node(int node) const;  // global GPU ranks, ascending
  int node_of_gpu(int gpu) const;
  int device_of_gpu(int gpu) const;
  const std::vector<Device>& devices() const;
  const std::vector<Link>& links() const;

  // Fewest-hop path between two GPUs that never passes through a third GPU; ties go to the path found
  // first in link order (deterministic). REQUIRES: both ranks < gpu_count(). Same GPU: empty route.
  // No path at all (only possible for hand-built graphs): empty route with bottleneck_bw 0.
  Route route(int gpu_from, int gpu_to) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenline
