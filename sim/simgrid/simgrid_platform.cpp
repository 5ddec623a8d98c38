#include "sim/simgrid/simgrid_platform.h"

#include "topologies/cluster_loader.h"

namespace tokenline::sg {
namespace {

LinkClass link_class(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return LinkClass::kNvlink;
    case LinkKind::kPcie:
      return LinkClass::kPcie;
    case LinkKind::kIb:
      return LinkClass::kIb;
  }
  return LinkClass::kPcie;
}

double efficiency(LinkKind kind, const Efficiency& e) {
  switch (kind) {
    case LinkKind::kNvlink:
      return e.nvlink;
    case LinkKind::kPcie:
      return 1.0;  // no PCIe factor in the hardware JSON: line rate
    case LinkKind::kIb:
      return e.ib;
  }
  return 1.0;
}

// Walks a route from the source GPU's device, so each hop knows which way it crosses its link.
std::vector<PlatformHop> hops(const Cluster& cluster, int src, int dst) {
  std::vector<PlatformHop> out;
  const Route route = cluster.route(src, dst);
  int at = cluster.device_of_gpu(src);
  for (int id : route.link_ids) {
    const Link& l = cluster.links()[static_cast<size_t>(id)];
    const bool up = l.a == at;
    out.push_back(PlatformHop{.link = id, .up = up});
    at = up ? l.b : l.a;
  }
  return out;
}

}  // namespace

PlatformSpec load_platform(const std::string& cluster_name_or_path, double hbm_bw) {
  const Cluster cluster = load_cluster(cluster_name_or_path);
  const Hardware& hw = cluster.hardware();
  PlatformSpec spec;
  spec.name = cluster.name();
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    const Device& d = cluster.devices()[static_cast<size_t>(cluster.device_of_gpu(g))];
    spec.hosts.push_back(PlatformHost{
        .name = d.name, .node = cluster.node_of_gpu(g), .speed_flops = hw.peak_flops_fp8, .hbm_bw = hbm_bw});
  }
  for (const Link& l : cluster.links()) {
    spec.links.push_back(
        PlatformLink{.name = l.name,
                     .link_class = link_class(l.kind),
                     .bw_per_direction = l.bw_per_direction * efficiency(l.kind, hw.efficiency),
                     .latency_s = l.latency_s});
  }
  spec.host_links.assign(spec.hosts.size(), -1);
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    for (const Link& l : cluster.links()) {
      if (l.kind == LinkKind::kPcie && l.a == cluster.device_of_gpu(g)) {
        spec.host_links[static_cast<size_t>(g)] = l.id;
        break;
      }
    }
  }
  const size_t n = spec.hosts.size();
  spec.routes.assign(n, std::vector<std::vector<PlatformHop>>(n));
  for (size_t s = 0; s < n; ++s) {
    for (size_t t = 0; t < n; ++t) {
      if (s != t) spec.routes[s][t] = hops(cluster, static_cast<int>(s), static_cast<int>(t));
    }
  }
  return spec;
}

}  // namespace tokenline::sg
