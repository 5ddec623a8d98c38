#include "topologies/cluster_loader.h"

#include <string>
#include <utility>

#include "common/input_error.h"
#include "topologies/hardware_loader.h"
#include "topologies/preset_source.h"
#include "topologies/spec_fields.h"

namespace tokenline {
namespace {

using nlohmann::json;
using spec::Where;

enum class FabricKind { kNone, kRailOptimized };

struct LinkSpec {
  double bw_per_direction = 0;
  double latency_s = 0;
};

struct ClusterSpec {
  std::string name;
  std::string hardware;
  int nodes = 0;
  int gpus_per_node = 0;
  LinkSpec nvlink, pcie, ib;
  FabricKind fabric = FabricKind::kNone;
  int spines = 0;
};

LinkSpec read_link(const json& links, std::string_view key, const Where& where) {
  const Where at = where.child(key);
  const json& l = spec::require_object(links, key, where);
  spec::reject_unknown_keys(l, {"bw_per_direction", "latency_s"}, at);
  LinkSpec s{spec::sourced_value(l, "bw_per_direction", at), spec::sourced_value(l, "latency_s", at)};
  if (s.bw_per_direction <= 0)
    throw InputError(at.child("bw_per_direction").child("value").text(), "a number > 0", "0");
  return s;
}

void read_fabric(const json& doc, const Where& root, ClusterSpec& s) {
  const Where at = root.child("fabric");
  const json& f = spec::require_object(doc, "fabric", root);
  const std::string kind = spec::require_string(f, "kind", at);
  if (kind == "none") {
    spec::reject_unknown_keys(f, {"kind"}, at);
    if (s.nodes != 1)
      throw InputError(at.child("kind").text(), "\"rail_optimized\" for more than one node",
                       "\"none\" with nodes = " + std::to_string(s.nodes));
    s.fabric = FabricKind::kNone;
  } else if (kind == "rail_optimized") {
    spec::reject_unknown_keys(f, {"kind", "spines"}, at);
    s.fabric = FabricKind::kRailOptimized;
    s.spines = static_cast<int>(spec::require_count(f, "spines", at));
  } else {
    throw InputError(at.child("kind").text(), "one of \"none\", \"rail_optimized\"", "\"" + kind + "\"");
  }
}

ClusterSpec read_spec(const json& doc, const Where& root) {
  spec::reject_unknown_keys(
      doc, {"name", "description", "hardware", "nodes", "gpus_per_node", "links", "fabric"}, root);
  ClusterSpec s;
  s.name = spec::require_string(doc, "name", root);
  spec::require_string(doc, "description", root);
  s.hardware = spec::require_string(doc, "hardware", root);
  s.nodes = static_cast<int>(spec::require_count(doc, "nodes", root));
  s.gpus_per_node = static_cast<int>(spec::require_count(doc, "gpus_per_node", root));
  const Where links_at = root.child("links");
  const json& links = spec::require_object(doc, "links", root);
  spec::reject_unknown_keys(links, {"nvlink", "pcie", "ib"}, links_at);
  s.nvlink = read_link(links, "nvlink", links_at);
  s.pcie = read_link(links, "pcie", links_at);
  s.ib = read_link(links, "ib", links_at);
  read_fabric(doc, root, s);
  return s;
}

// Appends devices and links in a fixed order (node by node, then the fabric) so ids are stable.
class GraphBuilder {
 public:
  int device(DeviceKind kind, std::string name, int node, int gpu) {
    const int id = static_cast<int>(devices_.size());
    devices_.push_back(Device{id, kind, std::move(name), node, gpu});
    return id;
  }
  void link(LinkKind kind, int a, int b, const LinkSpec& s) {
    const int id = static_cast<int>(links_.size());
    std::string name = devices_[a].name + "-" + devices_[b].name;
    links_.push_back(Link{id, kind, std::move(name), a, b, s.bw_per_direction, s.latency_s});
  }
  std::vector<Device> devices_;
  std::vector<Link> links_;
};

Cluster build(const ClusterSpec& s, Hardware hw) {
  GraphBuilder g;
  std::vector<std::vector<int>> nics(s.nodes);  // nics[node][local gpu]
  for (int n = 0; n < s.nodes; ++n) {
    const std::string prefix = "node" + std::to_string(n) + "/";
    const int nvswitch = g.device(DeviceKind::kNvSwitch, prefix + "nvswitch", n, -1);
    for (int l = 0; l < s.gpus_per_node; ++l) {
      const int gpu =
          g.device(DeviceKind::kGpu, prefix + "gpu" + std::to_string(l), n, n * s.gpus_per_node + l);
      const int nic = g.device(DeviceKind::kNic, prefix + "nic" + std::to_string(l), n, -1);
      g.link(LinkKind::kNvlink, gpu, nvswitch, s.nvlink);
      g.link(LinkKind::kPcie, gpu, nic, s.pcie);
      nics[n].push_back(nic);
    }
  }
  if (s.fabric == FabricKind::kRailOptimized) {
    std::vector<int> spines;
    for (int i = 0; i < s.spines; ++i)
      spines.push_back(g.device(DeviceKind::kSpineSwitch, "spine" + std::to_string(i), -1, -1));
    for (int rail = 0; rail < s.gpus_per_node; ++rail) {
      const int leaf = g.device(DeviceKind::kLeafSwitch, "leaf" + std::to_string(rail), -1, -1);
      for (int n = 0; n < s.nodes; ++n) g.link(LinkKind::kIb, nics[n][rail], leaf, s.ib);
      for (int spine : spines) g.link(LinkKind::kIb, leaf, spine, s.ib);
    }
  }
  return Cluster(s.name, std::move(hw), s.nodes, std::move(g.devices_), std::move(g.links_));
}

}  // namespace

Cluster parse_cluster(const std::string& text, const std::string& file) {
  const json doc = spec::parse_document(text, file);
  const ClusterSpec s = read_spec(doc, Where{file, ""});
  Hardware hw = load_hardware(s.hardware);
  if (hw.gpus_per_node < s.gpus_per_node)
    throw InputError(Where{file, "gpus_per_node"}.text(),
                     "at most " + std::to_string(hw.gpus_per_node) + " (the " + hw.name + " NVLink domain)",
                     std::to_string(s.gpus_per_node));
  return build(s, std::move(hw));
}

Cluster load_cluster(const std::string& name_or_path) {
  const PresetSource src = resolve_preset(name_or_path, "clusters");
  return parse_cluster(src.text, src.file);
}

std::vector<std::string> cluster_presets() {
  return preset_names("clusters");
}

}  // namespace tokenline
