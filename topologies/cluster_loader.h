// Loading a Cluster from a preset name ("h200x8", "h200x16-ib", compiled in) or a JSON file path.
// Format (topologies/clusters/h200x16-ib.json): hardware preset, node and GPU counts, sourced link
// figures for nvlink / pcie / ib, and a fabric kind ("none" or "rail_optimized" with a spine count).
#pragma once

#include <string>
#include <vector>

#include "topologies/cluster.h"

namespace tokenline {

// Builds per node: GPUs, one logical NVSwitch (one NVLink link per GPU), one NIC per GPU (PCIe link);
// rail_optimized adds one leaf switch per local GPU index (rail) and `spines` spine switches, each leaf
// linked to every spine. Throws InputError naming file and field for bad or inconsistent input.
Cluster load_cluster(const std::string& name_or_path);

// Parses one cluster document; `file` names it in error messages.
Cluster parse_cluster(const std::string& text, const std::string& file);

// Names of the embedded cluster presets, sorted.
std::vector<std::string> cluster_presets();

}  // namespace tokenline
