#include "topologies/hardware_loader.h"

#include <initializer_list>
#include <string>
#include <string_view>

#include "common/input_error.h"
#include "common/number_text.h"
#include "topologies/preset_source.h"
#include "topologies/spec_fields.h"

namespace tokenline {
namespace {

using nlohmann::json;
using spec::Where;

void read_peak_flops(const json& doc, const Where& root, Hardware& hw) {
  const Where at = root.child("peak_flops");
  const json& pf = spec::require_object(doc, "peak_flops", root);
  spec::reject_unknown_keys(pf, {"fp8", "bf16", "fp32", "nvfp4"}, at);
  hw.peak_flops_fp8 = spec::sourced_value(pf, "fp8", at);
  hw.peak_flops_bf16 = spec::sourced_value(pf, "bf16", at);
  hw.peak_flops_fp32 = spec::sourced_value(pf, "fp32", at);
  hw.peak_flops_nvfp4 = spec::sourced_value(pf, "nvfp4", at);
}

void read_memory_and_links(const json& doc, const Where& root, Hardware& hw) {
  const Where hbm_at = root.child("hbm");
  const json& hbm = spec::require_object(doc, "hbm", root);
  spec::reject_unknown_keys(hbm, {"bytes", "device_mib", "bw", "usable_fraction"}, hbm_at);
  hw.hbm_bytes = spec::sourced_value(hbm, "bytes", hbm_at);
  if (hbm.contains("device_mib")) {  // optional: a JSON without it sizes engines from hbm.bytes
    hw.device_mib = spec::sourced_value(hbm, "device_mib", hbm_at);
    if (hw.device_mib <= 0)
      throw InputError(hbm_at.child("device_mib").child("value").text(), "MiB > 0",
                       number_text(hw.device_mib));
  }
  hw.hbm_bw = spec::sourced_value(hbm, "bw", hbm_at);
  hw.usable_hbm_fraction = spec::sourced_value(hbm, "usable_fraction", hbm_at);

  const Where nv_at = root.child("nvlink");
  const json& nv = spec::require_object(doc, "nvlink", root);
  spec::reject_unknown_keys(nv, {"bw_per_direction", "ring_bw", "latency_s"}, nv_at);
  hw.nvlink_bw = spec::sourced_value(nv, "bw_per_direction", nv_at);
  hw.nvlink_ring_bw = spec::sourced_value(nv, "ring_bw", nv_at);
  hw.nvlink_latency_s = spec::sourced_value(nv, "latency_s", nv_at);

  const Where ib_at = root.child("ib");
  const json& ib = spec::require_object(doc, "ib", root);
  spec::reject_unknown_keys(ib, {"nics_per_gpu", "bw_per_direction", "seed_bw", "latency_s"}, ib_at);
  hw.nics_per_gpu = static_cast<int>(spec::sourced_count(ib, "nics_per_gpu", ib_at));
  hw.ib_bw = spec::sourced_value(ib, "bw_per_direction", ib_at);
  hw.ib_seed_bw = spec::sourced_value(ib, "seed_bw", ib_at);
  hw.ib_latency_s = spec::sourced_value(ib, "latency_s", ib_at);

  const Where node_at = root.child("node");
  const json& node = spec::require_object(doc, "node", root);
  spec::reject_unknown_keys(node, {"gpus_per_node"}, node_at);
  hw.gpus_per_node = static_cast<int>(spec::sourced_count(node, "gpus_per_node", node_at));
}

void read_overheads_and_efficiency(const json& doc, const Where& root, Hardware& hw) {
  const Where oh_at = root.child("overheads");
  const json& oh = spec::require_object(doc, "overheads", root);
  spec::reject_unknown_keys(oh, {"collective_launch_s", "kernel_launch_s"}, oh_at);
  hw.collective_launch_s = spec::sourced_value(oh, "collective_launch_s", oh_at);
  hw.kernel_launch_s = spec::sourced_value(oh, "kernel_launch_s", oh_at);

  const Where ef_at = root.child("efficiency");
  const json& ef = spec::require_object(doc, "efficiency", root);
  spec::reject_unknown_keys(ef, {"gemm", "attention", "hbm", "nvlink", "ib"}, ef_at);
  hw.efficiency.gemm = spec::sourced_factor(ef, "gemm", ef_at);
  hw.efficiency.attention = spec::sourced_factor(ef, "attention", ef_at);
  hw.efficiency.hbm = spec::sourced_factor(ef, "hbm", ef_at);
  hw.efficiency.nvlink = spec::sourced_factor(ef, "nvlink", ef_at);
  hw.efficiency.ib = spec::sourced_factor(ef, "ib", ef_at);
}

// Optional: the GPU's link to host DRAM that a host KV tier moves pages over (engine/core/kv_tier.h).
void read_host_link(const json& doc, const Where& root, Hardware& hw) {
  if (!doc.contains("host_link")) return;
  const Where at = root.child("host_link");
  const json& link = spec::require_object(doc, "host_link", root);
  spec::reject_unknown_keys(link, {"kind", "bw_per_direction", "latency_s"}, at);
  hw.host_link_kind = spec::require_string(link, "kind", at);
  hw.host_link_bw = spec::sourced_value(link, "bw_per_direction", at);
  hw.host_link_latency_s = spec::sourced_value(link, "latency_s", at);
  if (hw.host_link_bw <= 0)
    throw InputError(at.child("bw_per_direction").child("value").text(), "a number > 0",
                     number_text(hw.host_link_bw));
  if (hw.host_link_latency_s < 0)
    throw InputError(at.child("latency_s").child("value").text(), "a number >= 0",
                     number_text(hw.host_link_latency_s));
}

// Values that parse but make no physical sense: fractions above 1 and parts with nothing to compute on.
void check_ranges(const Where& root, const Hardware& hw) {
  auto fraction = [&](double v, std::initializer_list<std::string_view> path) {
    if (v > 0 && v <= 1) return;
    Where at = root;
    for (std::string_view p : path) at = at.child(p);
    throw InputError(at.child("value").text(), "a fraction in (0, 1]", number_text(v));
  };
  fraction(hw.usable_hbm_fraction, {"hbm", "usable_fraction"});
  fraction(hw.efficiency.gemm, {"efficiency", "gemm"});
  fraction(hw.efficiency.attention, {"efficiency", "attention"});
  fraction(hw.efficiency.hbm, {"efficiency", "hbm"});
  fraction(hw.efficiency.nvlink, {"efficiency", "nvlink"});
  fraction(hw.efficiency.ib, {"efficiency", "ib"});
  auto positive = [&](double v, std::string_view group, std::string_view key) {
    if (v <= 0)
      throw InputError(root.child(group).child(key).child("value").text(), "a number > 0", number_text(v));
  };
  positive(hw.peak_flops_fp8, "peak_flops", "fp8");
  positive(hw.peak_flops_bf16, "peak_flops", "bf16");
  positive(hw.hbm_bytes, "hbm", "bytes");
  positive(hw.hbm_bw, "hbm", "bw");
  positive(hw.nvlink_bw, "nvlink", "bw_per_direction");
  positive(hw.nvlink_ring_bw, "nvlink", "ring_bw");
  positive(hw.ib_bw, "ib", "bw_per_direction");
}

}  // namespace

Hardware parse_hardware(const std::string& text, const std::string& file) {
  const json doc = spec::parse_document(text, file);
  const Where root{file, ""};
  spec::reject_unknown_keys(doc,
                            {"name", "description", "peak_flops", "hbm", "nvlink", "ib", "node", "overheads",
                             "efficiency", "host_link", "price"},  // price: read by topologies/gpu_price.h
                            root);
  Hardware hw;
  hw.name = spec::require_string(doc, "name", root);
  spec::require_string(doc, "description", root);
  read_peak_flops(doc, root, hw);
  read_memory_and_links(doc, root, hw);
  read_overheads_and_efficiency(doc, root, hw);
  read_host_link(doc, root, hw);
  check_ranges(root, hw);
  return hw;
}

Hardware load_hardware(const std::string& name_or_path) {
  const PresetSource src = resolve_preset(name_or_path, "hardware");
  return parse_hardware(src.text, src.file);
}

std::vector<std::string> hardware_presets() {
  return preset_names("hardware");
}

}  // namespace tokenline
