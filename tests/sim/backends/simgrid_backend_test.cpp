// The simgrid backend on the two-node H200 platform: with no competing traffic its steps equal the
// ledger's (analytic) step times; a PD-sized transfer sharing an IB NIC with the EP all-to-all slows the
// steps by the shared bytes over the NIC bandwidth. One SimEngine per test case (ctest runs each case in
// its own process); nothing throws inside actors: results are stored and checked after run().
#include "sim/backends/simgrid_backend.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cost/op_profile.h"
#include "engine/model/model_config.h"
#include "sim/backends/analytic_backend.h"
#include "sim/simgrid/link_meter.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "sim/simgrid/simgrid_network.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

constexpr const char* kCluster = "h200x16-ib";  // 2 nodes x 8 H200, rail-optimized NDR fabric
constexpr double kAgreement = 0.01;             // the bound: within 1% of analytic

CostModel glm_on_h200(const std::string& parallel) {
  const ModelConfig model = model_preset("glm-5.3");
  return make_cost_model(model, parse_parallel(parallel, "test"), model.default_kv_layout,
                         load_hardware("h200"));
}

StepBatches decode_batches(const CostModel& cm, int64_t batch, int64_t context) {
  StepBatches s;
  for (int r = 0; r < cm.parallel.dp_attention; ++r) {
    Batch b;
    b.rank = r;
    for (int64_t i = 0; i < batch; ++i) {
      b.entries.push_back(BatchEntry{.id = static_cast<RequestId>(i),
                                     .phase = Phase::kDecode,
                                     .new_tokens = 1,
                                     .context_tokens = context});
    }
    s.ranks.push_back(std::move(b));
  }
  return s;
}

StepBatches prefill_batches(int64_t tokens, int64_t prefix) {
  StepBatches s;
  Batch b;
  b.entries.push_back(BatchEntry{
      .id = 1, .phase = Phase::kPrefill, .new_tokens = tokens, .context_tokens = prefix, .last_chunk = true});
  s.ranks.push_back(std::move(b));
  return s;
}

struct Sample {
  std::string what;
  double simgrid_s = 0;
  double analytic_s = 0;
};

void check_agreement(const std::vector<Sample>& samples, size_t expected) {
  REQUIRE(samples.size() == expected);
  for (const Sample& s : samples) {
    INFO(s.what << ": simgrid " << s.simgrid_s << " s, analytic " << s.analytic_s << " s");
    REQUIRE(s.analytic_s > 0);
    CHECK(std::abs(s.simgrid_s - s.analytic_s) <= kAgreement * s.analytic_s);
  }
}

std::vector<Sample> run_grid(bool op_detail) {
  const std::vector<std::string> layouts = {"tp8", "tp2", "dp8-ep8", "dp16-ep16"};
  const std::vector<int64_t> batches = {1, 16, 256};
  const std::vector<int64_t> contexts = {4096, 131072, 1048576};
  std::vector<CostModel> models;
  for (const std::string& l : layouts) models.push_back(glm_on_h200(l));
  const sg::PlatformSpec platform = sg::load_platform(kCluster, models.front().hbm_bw);
  std::vector<Sample> samples;
  sg::SimEngine engine(platform);
  engine.add_actor("grid", [&] {
    for (size_t m = 0; m < models.size(); ++m) {
      SimgridBackend backend(models[m], platform, 0, op_detail);
      auto one = [&](const std::string& what, const StepBatches& step) {
        const double before = sg::now_s();
        const StepOutcome out = backend.execute(step);
        samples.push_back({layouts[m] + " " + what, sg::now_s() - before, backend.last_cost().total_s});
        if (std::abs(out.duration_s - samples.back().simgrid_s) > 1e-12) samples.back().simgrid_s = -1;
      };
      for (int64_t b : batches) {
        for (int64_t c : contexts)
          one("decode b" + std::to_string(b) + " ctx" + std::to_string(c), decode_batches(models[m], b, c));
      }
      one("prefill 32K chunk at 96K", prefill_batches(32768, 98304));
    }
  });
  REQUIRE(engine.run());
  return samples;
}

TEST_CASE("simgrid steps equal analytic steps without competing traffic") {
  check_agreement(run_grid(false), 4 * (3 * 3 + 1));
}

TEST_CASE("simgrid op-by-op steps equal analytic steps without competing traffic") {
  check_agreement(run_grid(true), 4 * (3 * 3 + 1));
}

TEST_CASE("simgrid runs a short profiled step to its per-layer floor, as analytic prices it") {
  CostOptions o;
  auto p = load_op_profile("h200-sglang");
  apply_profile_sets(*p, "step_cpu_overhead_s=0,step_cpu_per_request_s=0,step_floor_per_layer_s=0.0004");
  o.profile = std::move(p);
  const ModelConfig model = model_preset("deepseek-v3");
  const CostModel cm =
      make_cost_model(model, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("h200"), o);
  const sg::PlatformSpec platform = sg::load_platform(kCluster, cm.hbm_bw);
  std::vector<Sample> samples;
  double floor_s = 0;
  sg::SimEngine engine(platform);
  engine.add_actor("floor", [&] {
    for (bool op_detail : {false, true}) {
      SimgridBackend backend(cm, platform, 0, op_detail);
      const StepOutcome out = backend.execute(decode_batches(cm, 1, 1023));
      samples.push_back({op_detail ? "op detail" : "merged", out.duration_s, backend.last_cost().total_s});
      floor_s = backend.last_cost().floor_s;
    }
  });
  REQUIRE(engine.run());
  CHECK(floor_s > 0);  // 0.4 ms per layer is above a one-request DeepSeek step
  check_agreement(samples, 2);
  for (const Sample& s : samples) CHECK(s.simgrid_s >= 0.0004 * model.layers * (1 - 1e-9));
}

TEST_CASE("simgrid runs an MTP step to the floor of its draft passes' layers too, as analytic prices it") {
  CostOptions o;
  auto p = load_op_profile("h200-sglang");
  apply_profile_sets(*p, "step_cpu_overhead_s=0,step_cpu_per_request_s=0,step_floor_per_layer_s=0.0004");
  o.profile = std::move(p);
  o.mtp = true;
  const ModelConfig model = model_preset("deepseek-v3");
  const CostModel cm =
      make_cost_model(model, parse_parallel("tp8", "test"), KvLayout::kFp8E4m3, load_hardware("h200"), o);
  const sg::PlatformSpec platform = sg::load_platform(kCluster, cm.hbm_bw);
  StepBatches verify = decode_batches(cm, 1, 1023);
  verify.ranks[0].entries[0].new_tokens = 3;  // 1 + 2 drafts verified: 2 draft passes of the MTP layer
  verify.ranks[0].entries[0].draft_tokens = 2;
  std::vector<Sample> samples;
  sg::SimEngine engine(platform);
  engine.add_actor("mtp floor", [&] {
    for (bool op_detail : {false, true}) {
      SimgridBackend backend(cm, platform, 0, op_detail);
      const StepOutcome out = backend.execute(verify);
      samples.push_back({op_detail ? "op detail" : "merged", out.duration_s, backend.last_cost().total_s});
    }
  });
  REQUIRE(engine.run());
  check_agreement(samples, 2);
  for (const Sample& s : samples) CHECK(s.simgrid_s >= 0.0004 * (model.layers + 2) * (1 - 1e-9));
}

TEST_CASE("a PD transfer sharing an IB NIC with the EP all-to-all slows steps by the shared bytes") {
  const CostModel cm = glm_on_h200("dp16-ep16");
  const sg::PlatformSpec platform = sg::load_platform(kCluster, cm.hbm_bw);
  // The PD transfer: node0/gpu1 -> node1/gpu1 (GPU 9) on rail 1. Only the EP all-to-all's rail-1 flow
  // from GPU 1 crosses the same links in the same direction; the ring collectives cross on rails 0 and 7.
  constexpr int kPdSrc = 1, kPdDst = 9;
  constexpr double kPdBytes = 56.6e9;  // the seed's 1M-context KV + indexer hand-off
  const std::vector<sg::PlatformHop>& pd_route = platform.routes[kPdSrc][kPdDst];
  REQUIRE(!pd_route.empty());
  double pd_bw = 1e300;
  size_t nic_dir = 0;  // the PD route's slowest link direction (an IB hop), as link_bytes() indexes it
  for (const sg::PlatformHop& h : pd_route) {
    const sg::PlatformLink& l = platform.links[static_cast<size_t>(h.link)];
    if (l.bw_per_direction < pd_bw) {
      pd_bw = l.bw_per_direction;
      nic_dir = static_cast<size_t>(h.link) * 2 + (h.up ? 0 : 1);
    }
  }
  REQUIRE(platform.links[nic_dir / 2].link_class == sg::LinkClass::kIb);
  const StepBatches step = decode_batches(cm, 64, 8192);
  std::vector<double> alone_s, shared_s, shared_bytes;
  double pd_end_s = 0, pd_start_s = 0;
  std::unique_ptr<sg::Signal> go;
  LinkMeter meter(platform, kLinkWindowS);
  double metered = 0;
  sg::SimEngine engine(platform);
  engine.add_actor("steps", [&] {
    go = std::make_unique<sg::Signal>();
    SimgridBackend backend(cm, platform, 0, false);
    backend.set_meter(&meter);
    for (int i = 0; i < 3; ++i) alone_s.push_back(backend.execute(step).duration_s);
    pd_start_s = sg::now_s();
    go->notify();
    while (pd_end_s == 0) {
      const double before = backend.link_bytes()[nic_dir];
      const double d = backend.execute(step).duration_s;
      if (pd_end_s == 0) {  // the PD transfer was running for the whole step
        shared_s.push_back(d);
        shared_bytes.push_back(backend.link_bytes()[nic_dir] - before);
      }
    }
  });
  engine.add_actor("pd", [&] {
    go->wait();
    sg::Activities pd;
    pd.transfer(kPdSrc, kPdDst, kPdBytes);
    pd.wait_all();
    pd_end_s = sg::now_s();
  });
  REQUIRE(engine.run());
  REQUIRE(alone_s.size() == 3);
  metered = meter.total_bytes(static_cast<int>(nic_dir));
  double counted = 0;
  for (double bytes : shared_bytes) counted += bytes;
  CHECK(metered >= counted);  // the meter saw every step's bytes on the shared NIC, the alone ones too
  REQUIRE(shared_s.size() >= 3);
  for (size_t i = 0; i < shared_s.size(); ++i) {
    // The rail-1 flow gets half the NIC while the PD transfer runs: it takes its bytes / (bw / 2), that is
    // bytes / bw longer than alone, and that flow is the step's slowest, so the step is longer by it.
    const double predicted_rise_s = shared_bytes[i] / pd_bw;
    INFO("step " << i << ": alone " << alone_s[0] << " s, shared " << shared_s[i] << " s, predicted rise "
                 << predicted_rise_s << " s");
    REQUIRE(predicted_rise_s > 0.01 * alone_s[0]);
    CHECK(std::abs((shared_s[i] - alone_s[0]) - predicted_rise_s) <= kAgreement * predicted_rise_s);
  }
  // The NIC was busy the whole time: the PD transfer took its bytes plus the all-to-all bytes it shared.
  double all_shared = 0;
  for (double b : shared_bytes) all_shared += b;
  const double pd_alone_s = kPdBytes / pd_bw;
  const double pd_took_s = pd_end_s - pd_start_s;
  INFO("PD alone " << pd_alone_s << " s, took " << pd_took_s << " s, shared bytes " << all_shared);
  CHECK(pd_took_s >= (kPdBytes + all_shared) / pd_bw * (1 - kAgreement));
  CHECK(pd_took_s <= (kPdBytes + all_shared + shared_bytes.back() * 2) / pd_bw * (1 + kAgreement) + 1e-3);
}

// Seconds the step spent moving the bytes of `ops`: their spans (op-detail step) minus their launches
// and the pattern's wire latency (the seed's table counts bytes / bandwidth only).
double transfer_s(SimgridBackend& backend, const StepOutcome& out, std::initializer_list<Op> ops) {
  const StepCost& sc = backend.last_cost();
  double s = 0;
  for (Op op : ops) {
    const auto pattern = op_collective(op) == CollectiveKind::kAllToAll ? SimgridBackend::Pattern::kAllToAll
                                                                        : SimgridBackend::Pattern::kRing;
    for (const OpSpan& span : out.ops) {
      if (std::string_view(span.name) == op_name(op)) {
        s += span.duration_s - sc[op].launch_s - backend.plan(pattern, 8).latency_s;
      }
    }
  }
  return s;
}

TEST_CASE("the seed's NVLink-versus-IB table comes out of simgrid runs") {
  // The seed's table (--ideal rates): TP8 all-reduce bytes per step 157 x b x 6144 x 2 at 787 GB/s on
  // NVLink and at 25 GB/s over IB; one EP8 dispatch + combine of b = 256 is 256 x 8 x 6144 x 3 bytes.
  const ModelConfig model = model_preset("glm-5.3");
  const Hardware h200 = load_hardware("h200");
  CostOptions nvlink;
  nvlink.ideal = true;
  CostOptions ib = nvlink;
  ib.force_ib = true;
  auto cm = [&](const char* p, const CostOptions& o) {
    return make_cost_model(model, parse_parallel(p, "test"), model.default_kv_layout, h200, o);
  };
  const CostModel tp8_nvl = cm("tp8", nvlink), tp8_ib = cm("tp8", ib);
  const CostModel ep8_nvl = cm("dp8-ep8", nvlink), ep8_ib = cm("dp8-ep8", ib);
  const sg::PlatformSpec platform = sg::load_platform(kCluster, tp8_nvl.hbm_bw);
  const double tp_allreduces = 1 + 2.0 * model.layers;  // embedding + attention and MLP per layer
  const double hidden_bytes = double(model.hidden) * 2;
  const double nvl_bw = 787e9, ib_bw = 25e9;  // the seed's columns
  struct Row {
    std::string what;
    double got_s = 0;
    double seed_s = 0;
  };
  std::vector<Row> rows;
  sg::SimEngine engine(platform);
  engine.add_actor("table", [&] {
    // NVLink: GPUs 0-7 of node 0. IB: GPUs 4-11, so the ring and the all-to-all cross the fabric.
    SimgridBackend tp_nvl(tp8_nvl, platform, 0, true), tp_ib(tp8_ib, platform, 4, true);
    SimgridBackend ep_nvl(ep8_nvl, platform, 0, true), ep_ib(ep8_ib, platform, 4, true);
    const std::initializer_list<Op> tp_ops = {Op::kEmbedAllreduce, Op::kAttnAllreduce, Op::kMlpAllreduce};
    const std::initializer_list<Op> ep_ops = {Op::kDispatch, Op::kCombine};
    for (int64_t b : {int64_t{1}, int64_t{256}}) {
      const double bytes = tp_allreduces * double(b) * hidden_bytes;
      StepOutcome o = tp_nvl.execute(decode_batches(tp8_nvl, b, 4096));
      rows.push_back(
          {"TP8 b" + std::to_string(b) + " NVLink", transfer_s(tp_nvl, o, tp_ops), bytes / nvl_bw});
      o = tp_ib.execute(decode_batches(tp8_ib, b, 4096));
      rows.push_back({"TP8 b" + std::to_string(b) + " IB", transfer_s(tp_ib, o, tp_ops), bytes / ib_bw});
    }
    const double ep_bytes = 256.0 * model.experts_per_token * hidden_bytes / 2 * 3;  // FP8 out + BF16 back
    const double moe_layers = model.moe_layers();
    StepOutcome o = ep_nvl.execute(decode_batches(ep8_nvl, 256, 4096));
    rows.push_back({"EP8 b256 NVLink", transfer_s(ep_nvl, o, ep_ops) / moe_layers, ep_bytes / nvl_bw});
    o = ep_ib.execute(decode_batches(ep8_ib, 256, 4096));
    rows.push_back({"EP8 b256 IB", transfer_s(ep_ib, o, ep_ops) / moe_layers, ep_bytes / ib_bw});
  });
  REQUIRE(engine.run());
  REQUIRE(rows.size() == 6);
  for (const Row& r : rows) {
    INFO(r.what << ": simgrid " << r.got_s * 1e6 << " us, seed " << r.seed_s * 1e6 << " us");
    CHECK(std::abs(r.got_s - r.seed_s) <= kAgreement * r.seed_s);
  }
}

// A physical ring all-reduce of `bytes` over `gpus`: 2(n-1) steps, each GPU sending bytes / n to its
// right neighbour at once; returns its virtual duration.
double raw_ring_allreduce_s(const std::vector<int>& gpus, double bytes) {
  const double start = sg::now_s();
  const size_t n = gpus.size();
  for (size_t step = 0; step < 2 * (n - 1); ++step) {
    sg::Activities acts;
    for (size_t k = 0; k < n; ++k) acts.transfer(gpus[k], gpus[(k + 1) % n], bytes / double(n));
    acts.wait_all();
  }
  return sg::now_s() - start;
}

TEST_CASE("the seed's TP2 all-reduce stays within 1.5x of TP8 in simgrid ring runs") {
  // Same per-layer message (b x 6144 x 2 bytes, b = 32 and 256) over NVLink ports with their latency:
  // TP2 carries the whole message on one hop, TP8 7/4 of it over 14 shorter steps.
  const ModelConfig model = model_preset("glm-5.3");
  const sg::PlatformSpec platform = sg::load_platform(kCluster, 4.8e12);
  std::vector<double> ratio;
  sg::SimEngine engine(platform);
  engine.add_actor("rings", [&] {
    for (double b : {32.0, 256.0}) {
      const double bytes = b * double(model.hidden) * 2;
      const double tp2 = raw_ring_allreduce_s({0, 1}, bytes);
      const double tp8 = raw_ring_allreduce_s({0, 1, 2, 3, 4, 5, 6, 7}, bytes);
      ratio.push_back(tp2 / tp8);
    }
  });
  REQUIRE(engine.run());
  REQUIRE(ratio.size() == 2);
  for (double r : ratio) {
    INFO("TP2 / TP8 all-reduce time " << r);
    CHECK(r > 0);
    CHECK(r <= 1.5);
  }
}

TEST_CASE("simgrid overlap levels hide collectives behind compute by what the streams predict") {
  const CostModel cm = glm_on_h200("dp8-ep8");
  const sg::PlatformSpec platform = sg::load_platform(kCluster, cm.hbm_bw);
  const StepBatches step = decode_batches(cm, 256, 8192);
  std::vector<double> step_s;
  StepCost sc;
  sg::SimEngine engine(platform);
  engine.add_actor("levels", [&] {
    for (Overlap o : {Overlap::kNone, Overlap::kCombine, Overlap::kTwoBatch, Overlap::kDpGather}) {
      SimgridBackend backend(cm, platform, 0, false, o);
      step_s.push_back(backend.execute(step).duration_s);
      sc = backend.last_cost();
    }
  });
  REQUIRE(engine.run());
  REQUIRE(step_s.size() == 4);
  INFO("none " << step_s[0] << " s, combine " << step_s[1] << " s, tbo " << step_s[2] << " s, dp-gather "
               << step_s[3] << " s");
  CHECK(std::abs(step_s[0] - sc.total_s) <= kAgreement * sc.total_s);
  // Combine (NVLink) and the expert GEMM (HBM / SMs) share nothing: the pair takes the longer of the two.
  const auto bare = [&](Op op) { return sc[op].time_s - sc[op].launch_s; };
  const double combine_saved = std::min(bare(Op::kCombine), bare(Op::kExpertGemm));
  REQUIRE(combine_saved > 0);
  CHECK(std::abs((step_s[0] - step_s[1]) - combine_saved) <= kAgreement * combine_saved);
  double attention = 0;
  for (Op op : {Op::kAProj, Op::kNormRopeKvWrite, Op::kQBProj, Op::kIndexerScore, Op::kTopkSelect,
                Op::kSparseMla, Op::kOProj}) {
    attention += bare(op);
  }
  const double tbo_saved = std::min(bare(Op::kDispatch), attention);
  CHECK(std::abs((step_s[1] - step_s[2]) - tbo_saved) <= kAgreement * tbo_saved);
  // The DP gather and scatter share the NVLink ports with the combine: the comm stream takes their sum.
  const double moe = bare(Op::kRouter) + bare(Op::kSharedExpert) + bare(Op::kExpertGemm);
  const double comm = bare(Op::kCombine) + bare(Op::kDpAllgather) + bare(Op::kReduceScatter);
  const double dp_step = step_s[0] - tbo_saved - std::min(moe, comm);
  CHECK(std::abs(step_s[3] - dp_step) <= kAgreement * step_s[3]);
}

TEST_CASE("simgrid draws the same per-step MoE skew and MTP acceptance as analytic") {
  const CostModel cm = [] {
    const ModelConfig model = model_preset("glm-5.3");
    CostOptions o;
    o.mtp = true;
    return make_cost_model(model, parse_parallel("dp8-ep8", "test"), model.default_kv_layout,
                           load_hardware("h200"), o);
  }();
  StepNoise noise;
  noise.expert_skew = true;
  noise.moe.skew = ExpertSkew::kZipf;
  noise.mtp = true;
  noise.acceptance = MtpAcceptance{.mean = 0.6, .stddev = 0.1};
  constexpr uint64_t kSeed = 7;
  StepBatches step = decode_batches(cm, 32, 16384);
  for (Batch& b : step.ranks) {
    for (BatchEntry& e : b.entries) e.draft_tokens = 1;
  }
  AnalyticBackend analytic(cm, false, noise, kSeed, 0);
  std::vector<StepOutcome> expected, got;
  for (int i = 0; i < 5; ++i) expected.push_back(analytic.execute(step));
  const sg::PlatformSpec platform = sg::load_platform(kCluster, cm.hbm_bw);
  sg::SimEngine engine(platform);
  engine.add_actor("noisy", [&] {
    SimgridBackend backend(cm, platform, 0, false, Overlap::kNone, noise, kSeed, 0);
    for (int i = 0; i < 5; ++i) got.push_back(backend.execute(step));
  });
  REQUIRE(engine.run());
  REQUIRE(got.size() == expected.size());
  bool steps_differ = false;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("step " << i << ": simgrid " << got[i].duration_s << " s, analytic " << expected[i].duration_s
                 << " s");
    CHECK(std::abs(got[i].duration_s - expected[i].duration_s) <= kAgreement * expected[i].duration_s);
    CHECK(got[i].accepted_drafts == expected[i].accepted_drafts);
    steps_differ = steps_differ || expected[i].duration_s != expected[0].duration_s;
  }
  CHECK(steps_differ);  // the skew really varies from step to step
}

}  // namespace
}  // namespace tokenline
