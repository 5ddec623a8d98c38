// PlatformSpec: the SimGrid platform of a cluster as plain data (no SimGrid, no Boost.Graph here): GPU
// hosts with their peak FLOP/s and HBM loopback bandwidth, every physical link of the cluster with its
// achieved bandwidth per direction, and the hop list of every GPU-to-GPU route. The adapter
// (simgrid_network.cpp) turns it into zones, split-duplex links and routes; the simgrid backend reads the
// same routes to calibrate and to count per-link bytes.
#pragma once

#include <string>
#include <vector>

namespace tokenline::sg {

enum class LinkClass { kNvlink, kPcie, kIb };

struct PlatformHost {
  std::string name;  // "node0/gpu3"
  int node = 0;
  double speed_flops = 0;  // peak dense FP8 FLOP/s (the backend converts each op's time to this speed)
  double hbm_bw = 0;       // achieved HBM bytes/s: the loopback link of this host
};

struct PlatformLink {
  std::string name;  // the cluster link's name ("node0/gpu3-nvswitch")
  LinkClass link_class = LinkClass::kNvlink;
  double bw_per_direction = 0;  // achieved bytes/s (line rate x the hardware's efficiency factor)
  double latency_s = 0;
};

// One link of a route and the direction it is crossed in (up: from the link's first end to its second).
struct PlatformHop {
  int link = 0;
  bool up = true;
};

struct PlatformSpec {
  std::string name;
  std::vector<PlatformHost> hosts;  // index = global GPU rank
  std::vector<PlatformLink> links;
  // routes[src][dst]: hops from GPU src to GPU dst (empty for src == dst: that is the HBM loopback).
  std::vector<std::vector<std::vector<PlatformHop>>> routes;
  // Per GPU: its PCIe link (GPU <-> PCIe switch, the NIC's and the host's way in; crossed up from the GPU),
  // which host-tier KV loads and stores cross too; -1 where the cluster has none.
  std::vector<int> host_links;
  int gpu_count() const { return static_cast<int>(hosts.size()); }
};

// Builds the platform of a cluster preset or JSON path (throws InputError as load_cluster does).
// hbm_bw: achieved bytes/s per GPU (the cost model's rate); NVLink and IB links carry the hardware's
// nvlink / ib efficiency factors, PCIe its line rate.
PlatformSpec load_platform(const std::string& cluster_name_or_path, double hbm_bw);

}  // namespace tokenline::sg
