#include "cost/pd_link.h"

#include <catch2/catch.hpp>

#include "topologies/hardware_loader.h"

using namespace tokenline;

namespace {

CostModel glm(const char* parallel) {
  return make_cost_model(model_preset("glm-5.3"), parse_parallel(parallel, "test"), KvLayout::kFp8DsMla,
                         load_hardware("h200"));
}

constexpr int64_t kOneM = int64_t{1} << 20;  // the seed's 1M context

}  // namespace

TEST_CASE("A 1M-token request hands off 56.6 GB of KV and indexer cache", "[pd_link]") {
  const CostModel cm = glm("dp8-ep8");
  const PdTransfer t = pd_transfer(cm, kOneM);
  // GLM-5.3: 656 B x 78 layers of MLA KV + 132 B x 21 indexer layers, per token.
  CHECK(t.kv_bytes == Approx(656.0 * 78 * kOneM));
  CHECK(t.indexer_bytes == Approx(132.0 * 21 * kOneM));
  CHECK(t.total_bytes() / 1e9 == Approx(56.6).margin(0.05));
}

TEST_CASE("The hand-off takes the time its link gives", "[pd_link]") {
  const CostModel cm = glm("dp8-ep8");
  const Hardware& hw = cm.hardware;
  const double bytes = pd_transfer(cm, kOneM).total_bytes();
  const double nvlink = pd_link_rate(PdLink::kNvlink, cm, 1).time_s(bytes);
  const double ib200 = pd_link_rate(PdLink::kIb200, cm, 1).time_s(bytes);
  const double ib400 = pd_link_rate(PdLink::kIb400, cm, 1).time_s(bytes);
  CHECK(nvlink == Approx(hw.nvlink_latency_s + bytes / (hw.nvlink_bw * hw.efficiency.nvlink)));
  CHECK(ib200 == Approx(hw.ib_latency_s + bytes / (25e9 * hw.efficiency.ib)));
  CHECK(ib400 == Approx(hw.ib_latency_s + bytes / (50e9 * hw.efficiency.ib)));
  // 56.6 GB: ~0.13 s over one NVLink port, ~2.5 s over 200 Gb/s IB, half that over 400 Gb/s.
  CHECK(nvlink < 0.2);
  CHECK(ib200 > 2.0);
  CHECK(ib400 == Approx(ib200 / 2).epsilon(1e-4));
  // A tp8 prefill rank sends its eight shards over eight NICs at once.
  CHECK(pd_link_rate(PdLink::kIb400, cm, 8).bytes_per_s ==
        Approx(8 * pd_link_rate(PdLink::kIb400, cm, 1).bytes_per_s));
  CHECK(pd_link_rate(PdLink::kIb400, cm, 1).time_s(0) == 0);
}
