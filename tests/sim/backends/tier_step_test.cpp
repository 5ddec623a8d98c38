// Host-tier transfers in a simulated step: the analytic backend's closed form, and the simgrid backend's
// flows on the GPU's PCIe link, where a PD hand-off arriving through the same link slows the load. One
// SimEngine per test case (ctest runs each case in its own process).
#include "sim/backends/tier_step.h"

#include <catch2/catch.hpp>
#include <memory>

#include "engine/model/model_config.h"
#include "sim/backends/analytic_backend.h"
#include "sim/backends/simgrid_backend.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "sim/simgrid/simgrid_network.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

constexpr const char* kCluster = "h200x16-ib";  // 2 nodes x 8 H200, one NIC per GPU behind its PCIe link
constexpr double kLoadBytes = 6.3e9;            // ~0.1 s alone on a PCIe 5.0 x16 direction

CostModel deepseek_on_h200() {
  const ModelConfig model = model_preset("deepseek-v3");
  return make_cost_model(model, parse_parallel("tp8", "test"), model.default_kv_layout,
                         load_hardware("h200"));
}

// A 2048-token prefill chunk over a 32k-token prefix, kLoadBytes of which come back from host.
StepBatches loading_step(double load_bytes) {
  StepBatches s;
  Batch b;
  b.entries.push_back(BatchEntry{.id = 1,
                                 .phase = Phase::kPrefill,
                                 .new_tokens = 2048,
                                 .context_tokens = 32768,
                                 .last_chunk = true,
                                 .host_load_tokens = 32768});
  b.host_load_bytes = static_cast<int64_t>(load_bytes);
  s.ranks.push_back(std::move(b));
  return s;
}

}  // namespace

TEST_CASE("analytic adds the host load's stall to the step as the layer overlap rule says", "[tier]") {
  const CostModel cm = deepseek_on_h200();
  AnalyticBackend backend(cm, false);
  const StepOutcome none = backend.execute(loading_step(0));
  const StepOutcome loaded = backend.execute(loading_step(kLoadBytes));
  const double load_s = tier_transfer_s(host_link_of(cm), kLoadBytes);
  CHECK(none.tier_stall_s == 0);
  CHECK(loaded.tier_load_s == Approx(load_s));
  CHECK(loaded.tier_stall_s ==
        Approx(tier_load_stall_s(load_s, none.duration_s, cm.model.layers, TierLoadOverlap::kLayer)));
  CHECK(loaded.duration_s == Approx(none.duration_s + loaded.tier_stall_s));
  CHECK(loaded.tier_stall_s > 0);
}

TEST_CASE("a host-tier load takes longer while a PD hand-off shares the GPU's PCIe link", "[tier]") {
  const CostModel cm = deepseek_on_h200();
  const sg::PlatformSpec platform = sg::load_platform(kCluster, cm.hbm_bw);
  REQUIRE(platform.host_links[0] >= 0);
  // The PD hand-off node1/gpu0 (GPU 8) -> node0/gpu0 (GPU 0) enters GPU 0 through its PCIe link, the way
  // GPU 0's host loads come in.
  constexpr int kPdSrc = 8, kPdDst = 0;
  constexpr double kPdBytes = 200e9;
  bool crosses = false;
  for (const sg::PlatformHop& h : platform.routes[kPdSrc][kPdDst])
    crosses |= h.link == platform.host_links[kPdDst] && !h.up;
  REQUIRE(crosses);
  StepOutcome alone, shared, after;
  double pd_end_s = 0;
  std::unique_ptr<sg::Signal> go;
  sg::SimEngine engine(platform);
  engine.add_actor("steps", [&] {
    go = std::make_unique<sg::Signal>();
    SimgridBackend backend(cm, platform, 0, false);
    alone = backend.execute(loading_step(kLoadBytes));
    go->notify();
    sg::sleep_for(1e-3);  // the hand-off is under way
    shared = backend.execute(loading_step(kLoadBytes));
    while (pd_end_s == 0) sg::sleep_for(0.1);
    after = backend.execute(loading_step(kLoadBytes));
  });
  engine.add_actor("pd", [&] {
    go->wait();
    sg::Activities pd;
    pd.transfer(kPdSrc, kPdDst, kPdBytes);
    pd.wait_all();
    pd_end_s = sg::now_s();
  });
  REQUIRE(engine.run());
  // Alone, the flow runs at the link's rate as analytic prices it (the cluster's PCIe figure is the
  // hardware's host_link figure for H200).
  const double priced_s = tier_transfer_s(host_link_of(cm), kLoadBytes);
  INFO("alone " << alone.tier_load_s << " s, shared " << shared.tier_load_s << " s, priced " << priced_s);
  CHECK(alone.tier_load_s == Approx(priced_s).epsilon(0.01));
  // Shared: the PCIe direction is split between the two flows in inverse proportion to their route
  // latencies (SimGrid's CM02 sharing, RTT-unfair as TCP is; the hand-off's other limit, the IB NIC, is
  // above its share), so the load runs at bw x L_pd / (L_host + L_pd).
  const sg::PlatformLink& pcie = platform.links[static_cast<size_t>(platform.host_links[kPdDst])];
  double pd_latency = 0;
  for (const sg::PlatformHop& h : platform.routes[kPdSrc][kPdDst])
    pd_latency += platform.links[static_cast<size_t>(h.link)].latency_s;
  const double share = pcie.bw_per_direction * pd_latency / (pcie.latency_s + pd_latency);
  const double predicted_s = kLoadBytes / share + cm.hardware.host_link_latency_s + pcie.latency_s;
  INFO("predicted shared " << predicted_s << " s");
  CHECK(shared.tier_load_s > 1.2 * alone.tier_load_s);
  CHECK(shared.tier_load_s == Approx(predicted_s).epsilon(0.02));
  CHECK(shared.tier_stall_s > alone.tier_stall_s);
  CHECK(shared.duration_s > alone.duration_s);
  CHECK(after.tier_load_s == Approx(alone.tier_load_s).epsilon(1e-6));  // the link is free again
}

TEST_CASE("write-through copies run as flows toward host memory: an outgoing hand-off shares the link",
          "[tier]") {
  const CostModel cm = deepseek_on_h200();
  const sg::PlatformSpec platform = sg::load_platform(kCluster, cm.hbm_bw);
  // The hand-off node0/gpu0 (GPU 0) -> node1/gpu0 (GPU 8) leaves GPU 0 through its PCIe link, the way
  // GPU 0's write-through copies go to host memory.
  constexpr int kPdSrc = 0, kPdDst = 8;
  constexpr double kPdBytes = 3e9, kStoreBytes = 60e9;  // the copies outlast the hand-off
  bool crosses = false;
  for (const sg::PlatformHop& h : platform.routes[kPdSrc][kPdDst])
    crosses |= h.link == platform.host_links[kPdSrc] && h.up;
  REQUIRE(crosses);
  double pd_alone_s = 0, pd_shared_s = 0;
  StepOutcome plain, storing, load_alone, load_storing;
  sg::SimEngine engine(platform);
  engine.add_actor("steps", [&] {
    SimgridBackend backend(cm, platform, 0, false);
    auto hand_off = [] {
      const double t0 = sg::now_s();
      sg::Activities pd;
      pd.transfer(kPdSrc, kPdDst, kPdBytes);
      pd.wait_all();
      return sg::now_s() - t0;
    };
    pd_alone_s = hand_off();
    plain = backend.execute(loading_step(0));
    StepBatches step = loading_step(0);
    step.ranks[0].host_async_store_bytes = static_cast<int64_t>(kStoreBytes);
    storing = backend.execute(step);  // starts the copies and returns: the step does not wait on them
    pd_shared_s = hand_off();         // while they run
    sg::sleep_for(10);                // the copies end
    load_alone = backend.execute(loading_step(kLoadBytes));
    step = loading_step(kLoadBytes);
    step.ranks[0].host_async_store_bytes = static_cast<int64_t>(kStoreBytes);
    load_storing = backend.execute(step);
    sg::sleep_for(10);
  });
  REQUIRE(engine.run());
  INFO("hand-off alone " << pd_alone_s << " s, beside write-through copies " << pd_shared_s << " s");
  CHECK(storing.duration_s == Approx(plain.duration_s).epsilon(1e-9));
  CHECK(storing.tier_stall_s == 0);
  CHECK(pd_shared_s > 1.5 * pd_alone_s);
  // The PCIe direction is split as for a load beside a hand-off (CM02, inverse to route latencies): the
  // hand-off keeps bw x L_host / (L_host + L_pd), below what its IB NIC allows it alone.
  const sg::PlatformLink& pcie = platform.links[static_cast<size_t>(platform.host_links[kPdSrc])];
  double pd_latency = 0;
  for (const sg::PlatformHop& h : platform.routes[kPdSrc][kPdDst])
    pd_latency += platform.links[static_cast<size_t>(h.link)].latency_s;
  const double share = pcie.bw_per_direction * pcie.latency_s / (pcie.latency_s + pd_latency);
  CHECK(pd_shared_s == Approx(kPdBytes / share + pd_latency).epsilon(0.03));
  // A load comes in over the other direction of the full-duplex link (PCIe; the GPU's copy engines
  // for each direction run concurrently): the copies do not slow it.
  CHECK(load_storing.tier_load_s == Approx(load_alone.tier_load_s).epsilon(1e-6));
}

}  // namespace tokenline
