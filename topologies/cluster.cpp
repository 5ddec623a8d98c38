#include "topologies/cluster.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <cassert>
#include <limits>
#include <utility>

namespace tokenline {
namespace {

// Undirected: one edge per full-duplex link; the edge property is the link id.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                    boost::property<boost::edge_index_t, int>>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

// Routes may not relay through a GPU other than their two ends (NVSwitch and NICs do the switching).
struct NoTransitGpus {
  const std::vector<Device>* devices = nullptr;
  Vertex from = 0;
  Vertex to = 0;
  bool operator()(Vertex v) const { return v == from || v == to || (*devices)[v].kind != DeviceKind::kGpu; }
};

}  // namespace

struct Cluster::Impl {
  std::string name;
  Hardware hardware;
  int node_count = 0;
  std::vector<Device> devices;
  std::vector<Link> links;
  std::vector<int> gpu_devices;  // GPU rank -> device id
  Graph graph;
};

const char* to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kNvSwitch:
      return "nvswitch";
    case DeviceKind::kNic:
      return "nic";
    case DeviceKind::kLeafSwitch:
      return "leaf";
    case DeviceKind::kSpineSwitch:
      return "spine";
  }
  return "?";
}

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kIb:
      return "ib";
  }
  return "?";
}

bool Route::crosses(LinkKind kind, const std::vector<Link>& all) const {
  return std::any_of(link_ids.begin(), link_ids.end(), [&](int id) { return all[id].kind == kind; });
}

Cluster::Cluster(std::string name, Hardware hardware, int node_count, std::vector<Device> devices,
                 std::vector<Link> links)
    : impl_(std::make_unique<Impl>()) {
  impl_->name = std::move(name);
  impl_->hardware = std::move(hardware);
  impl_->node_count = node_count;
  impl_->devices = std::move(devices);
  impl_->links = std::move(links);
  impl_->graph = Graph(impl_->devices.size());
  for (const Device& d : impl_->devices) {
    assert(d.id == static_cast<int>(&d - impl_->devices.data()) && "device ids must be dense indices");
    if (d.kind != DeviceKind::kGpu) continue;
    assert(d.gpu >= 0 && d.node >= 0 && d.node < node_count && "every GPU needs a rank and a node");
    if (impl_->gpu_devices.size() <= static_cast<size_t>(d.gpu)) impl_->gpu_devices.resize(d.gpu + 1, -1);
    impl_->gpu_devices[d.gpu] = d.id;
  }
  for (const Link& l : impl_->links) {
    assert(l.a >= 0 && l.b >= 0 && l.a < static_cast<int>(impl_->devices.size()) &&
           l.b < static_cast<int>(impl_->devices.size()) && "link ends must be device ids");
    boost::add_edge(l.a, l.b, l.id, impl_->graph);
  }
}

Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;
Cluster::~Cluster() = default;

const std::string& Cluster::name() const {
  return impl_->name;
}
const Hardware& Cluster::hardware() const {
  return impl_->hardware;
}
int Cluster::node_count() const {
  return impl_->node_count;
}
int Cluster::gpu_count() const {
  return static_cast<int>(impl_->gpu_devices.size());
}
int Cluster::device_of_gpu(int gpu) const {
  return impl_->gpu_devices.at(gpu);
}
int Cluster::node_of_gpu(int gpu) const {
  return impl_->devices[device_of_gpu(gpu)].node;
}
const std::vector<Device>& Cluster::devices() const {
  return impl_->devices;
}
const std::vector<Link>& Cluster::links() const {
  return impl_->links;
}

std::vector<int> Cluster::gpus_of_node(int node) const {
  std::vector<int> gpus;
  for (int g = 0; g < gpu_count(); ++g) {
    if (node_of_gpu(g) == node) gpus.push_back(g);
  }
  return gpus;
}

Route Cluster::route(int gpu_from, int gpu_to) const {
  Route r;
  r.bottleneck_bw = std::numeric_limits<double>::infinity();
  const Vertex from = device_of_gpu(gpu_from);
  const Vertex to = device_of_gpu(gpu_to);
  if (from == to) return r;
  const NoTransitGpus keep{&impl_->devices, from, to};
  boost::filtered_graph<Graph, boost::keep_all, NoTransitGpus> view(impl_->graph, boost::keep_all(), keep);
  std::vector<Edge> pred(boost::num_vertices(impl_->graph));
  std::vector<char> reached(boost::num_vertices(impl_->graph), 0);
  reached[from] = 1;
  auto record = boost::make_bfs_visitor(
      std::make_pair(boost::record_edge_predecessors(pred.data(), boost::on_tree_edge()),
                     boost::put_property(reached.data(), static_cast<char>(1), boost::on_discover_vertex())));
  boost::breadth_first_search(view, from, boost::visitor(record));
  if (!reached[to]) {  // disconnected graph: the loader never builds one; callers see bottleneck 0
    r.bottleneck_bw = 0;
    return r;
  }
  for (Vertex v = to; v != from;) {
    const Edge e = pred[v];
    const int id = boost::get(boost::edge_index, impl_->graph, e);
    r.link_ids.push_back(id);
    v = boost::source(e, impl_->graph) == v ? boost::target(e, impl_->graph) : boost::source(e, impl_->graph);
  }
  std::reverse(r.link_ids.begin(), r.link_ids.end());
  for (int id : r.link_ids) {
    r.bottleneck_bw = std::min(r.bottleneck_bw, impl_->links[id].bw_per_direction);
    r.latency_s += impl_->links[id].latency_s;
  }
  return r;
}

}  // namespace tokenline
