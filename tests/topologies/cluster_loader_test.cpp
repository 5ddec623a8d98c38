#include "topologies/cluster_loader.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "common/input_error.h"

namespace tokenline {
namespace {

constexpr double kNdrBw = 400e9 / 8;  // ConnectX-7 400 Gb/s per direction

std::string edited_cluster(const std::string& from, const std::string& to) {
  std::ifstream in(std::string(TOKENLINE_SOURCE_DIR) + "/topologies/clusters/h200x16-ib.json");
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    parse_cluster(text, "bad-cluster.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("one H200 node: 8 GPUs, every pair over NVLink via the NVSwitch", "[cluster]") {
  const Cluster c = load_cluster("h200x8");
  CHECK(c.gpu_count() == 8);
  CHECK(c.node_count() == 1);
  CHECK(c.gpus_of_node(0) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(c.hardware().name == "h200");
  const Route r = c.route(0, 5);
  REQUIRE(r.link_ids.size() == 2);  // gpu0 -> nvswitch -> gpu5
  for (int id : r.link_ids) CHECK(c.links()[id].kind == LinkKind::kNvlink);
  CHECK(r.bottleneck_bw == Approx(c.hardware().nvlink_bw));
  CHECK(r.latency_s == Approx(c.links()[r.link_ids[0]].latency_s * 2));
  CHECK(c.route(3, 3).link_ids.empty());
}

TEST_CASE("two H200 nodes: cross-node routes cross IB at 400 Gb/s, intra-node stay on NVLink", "[cluster]") {
  const Cluster c = load_cluster("h200x16-ib");
  CHECK(c.gpu_count() == 16);
  CHECK(c.node_count() == 2);
  CHECK(c.gpus_of_node(1).front() == 8);
  CHECK(c.node_of_gpu(11) == 1);

  const Route same_rail = c.route(0, 8);  // gpu0 -> nic -> leaf0 -> nic -> gpu8
  CHECK(same_rail.crosses(LinkKind::kIb, c.links()));
  CHECK_FALSE(same_rail.crosses(LinkKind::kNvlink, c.links()));
  CHECK(same_rail.link_ids.size() == 4);
  CHECK(same_rail.bottleneck_bw == Approx(kNdrBw));

  const Route cross_rail = c.route(0, 11);  // rail 0 -> spine -> rail 3; never relays through a GPU
  CHECK(cross_rail.link_ids.size() == 6);
  CHECK(cross_rail.bottleneck_bw == Approx(kNdrBw));
  for (int id : cross_rail.link_ids) {
    const Link& l = c.links()[id];
    CHECK((l.kind == LinkKind::kIb || l.kind == LinkKind::kPcie));
  }

  const Route intra = c.route(9, 15);
  CHECK_FALSE(intra.crosses(LinkKind::kIb, c.links()));
  CHECK(intra.bottleneck_bw == Approx(c.hardware().nvlink_bw));
}

TEST_CASE("routes are symmetric and links have dense ids", "[cluster]") {
  const Cluster c = load_cluster("h200x16-ib");
  for (size_t i = 0; i < c.links().size(); ++i) CHECK(c.links()[i].id == static_cast<int>(i));
  // 2 nodes x 8 GPUs x (nvlink + pcie) + 8 leaves x (2 NIC links + 2 spine links)
  CHECK(c.links().size() == 2 * 8 * 2 + 8 * (2 + 2));
  for (int a = 0; a < c.gpu_count(); ++a) {
    for (int b = 0; b < c.gpu_count(); ++b) {
      const Route ab = c.route(a, b);
      const Route ba = c.route(b, a);
      CHECK(ab.link_ids.size() == ba.link_ids.size());
      CHECK(std::set<int>(ab.link_ids.begin(), ab.link_ids.end()).size() == ab.link_ids.size());
    }
  }
}

TEST_CASE("bad cluster files name the field", "[cluster]") {
  CHECK(std::string(error_of(edited_cluster("\"rail_optimized\"", "\"fat_tree\"")))
            .find("bad-cluster.json: fabric.kind: expected one of \"none\", \"rail_optimized\", found "
                  "\"fat_tree\"") != std::string::npos);
  CHECK(error_of(edited_cluster("\"spines\": 2", "\"spines\": 0"))
            .find("fabric.spines: expected an integer >= 1") != std::string::npos);
  CHECK(error_of(edited_cluster("\"gpus_per_node\": 8", "\"gpus_per_node\": 9")).find("at most 8") !=
        std::string::npos);
  CHECK(error_of(edited_cluster("\"hardware\": \"h200\"", "\"hardware\": \"tpu\"")).find("hardware 'tpu'") !=
        std::string::npos);
  CHECK(error_of(edited_cluster("\"kind\": \"rail_optimized\", \"spines\": 2", "\"kind\": \"none\""))
            .find("fabric.kind: expected \"rail_optimized\" for more than one node") != std::string::npos);
  CHECK(error_of(
            edited_cluster("\"bw_per_direction\": {\"value\": 5.0e10", "\"bw_per_direction\": {\"value\": 0"))
            .find("links.ib.bw_per_direction.value: expected a number > 0") != std::string::npos);
  CHECK(cluster_presets() == std::vector<std::string>{"h200x16-ib", "h200x8"});
}

}  // namespace
}  // namespace tokenline
