#include "sim/backends/simgrid_backend.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>

#include "cost/tier_transfer.h"
#include "sim/simgrid/link_meter.h"
#include "sim/simgrid/simgrid_adapter.h"
#include "sim/simgrid/simgrid_network.h"

namespace tokenline {
namespace {

// A collective's time alone on the link: the measured time for a profile-priced term, else the transfer.
double link_time_s(const Term& t) {
  return priced(t.source) ? t.time_s : t.memory_s;
}

constexpr int kPatternCount = 2;  // Pattern::kRing, Pattern::kAllToAll

SimgridBackend::Pattern pattern_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllToAll:
      return SimgridBackend::Pattern::kAllToAll;
    case CollectiveKind::kNone:
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return SimgridBackend::Pattern::kRing;
  }
  return SimgridBackend::Pattern::kRing;
}

// Ring: each GPU streams to its right neighbour (NCCL pipelines the ring's chunks, so its 2(n-1) steps
// overlap into one flow per edge).
void ring_flows(const std::vector<int>& g, std::vector<SimgridBackend::Flow>& out) {
  const size_t n = g.size();
  for (size_t k = 0; k < n; ++k) out.push_back({g[k], g[(k + 1) % n], 1.0});
}

// All-to-all: each GPU sends one unit to every other member. Per destination node its units travel as
// one aggregate flow with the same load on the sender's ports and NIC: to the next member on its own
// node, or to the member at the same position on another node (the rail-aligned peer).
void all_to_all_flows(const sg::PlatformSpec& spec, const std::vector<int>& g,
                      std::vector<SimgridBackend::Flow>& out) {
  std::vector<std::vector<int>> by_node;
  std::vector<int> node_ids;
  for (int gpu : g) {
    const int node = spec.hosts[static_cast<size_t>(gpu)].node;
    auto it = std::find(node_ids.begin(), node_ids.end(), node);
    if (it == node_ids.end()) {
      node_ids.push_back(node);
      by_node.emplace_back();
      it = node_ids.end() - 1;
    }
    by_node[static_cast<size_t>(it - node_ids.begin())].push_back(gpu);
  }
  for (size_t a = 0; a < by_node.size(); ++a) {
    const std::vector<int>& mine = by_node[a];
    for (size_t i = 0; i < mine.size(); ++i) {
      for (size_t b = 0; b < by_node.size(); ++b) {
        const std::vector<int>& theirs = by_node[b];
        if (a == b) {
          if (mine.size() > 1) out.push_back({mine[i], mine[(i + 1) % mine.size()], double(mine.size() - 1)});
        } else {
          out.push_back({mine[i], theirs[i % theirs.size()], double(theirs.size())});
        }
      }
    }
  }
}

}  // namespace

SimgridBackend::SimgridBackend(const CostModel& cost_model, const sg::PlatformSpec& platform, int first_gpu,
                               bool op_detail, Overlap overlap, const StepNoise& noise, uint64_t seed,
                               int32_t instance)
    : cost_model_(cost_model),
      platform_(platform),
      first_gpu_(first_gpu),
      op_detail_(op_detail),
      overlap_(overlap),
      plans_(static_cast<size_t>(kPatternCount * (cost_model.parallel.gpus() + 1))),
      planned_(plans_.size(), 0),
      link_bytes_(platform.links.size() * 2, 0.0) {
  assert(first_gpu + cost_model.parallel.gpus() <= platform.gpu_count() && "instance beyond the platform");
  pattern_s_.assign(plans_.size(), 0.0);
  build_segments();
  if (noise.expert_skew || noise.mtp)
    noise_ = std::make_unique<StepNoiseSampler>(noise, cost_model, seed, instance);
}

SimgridBackend::~SimgridBackend() = default;

SimgridBackend::PatternPlan SimgridBackend::make_plan(Pattern pattern, int group) const {
  PatternPlan p;
  const int gpus = cost_model_.parallel.gpus();
  for (int start = 0; start + group <= gpus; start += group) {
    std::vector<int> g;
    for (int k = 0; k < group; ++k) g.push_back(first_gpu_ + start + k);
    switch (pattern) {
      case Pattern::kRing:
        ring_flows(g, p.flows);
        break;
      case Pattern::kAllToAll:
        all_to_all_flows(platform_, g, p.flows);
        break;
    }
  }
  // Load per link direction with every flow at scale 1; the slowest direction bounds the pattern.
  std::vector<double> load(platform_.links.size() * 2, 0.0);
  for (const Flow& f : p.flows) {
    double latency_s = 0;
    for (const sg::PlatformHop& h :
         platform_.routes[static_cast<size_t>(f.src)][static_cast<size_t>(f.dst)]) {
      load[static_cast<size_t>(h.link) * 2 + (h.up ? 0 : 1)] += f.coef;
      latency_s += platform_.links[static_cast<size_t>(h.link)].latency_s;
    }
    p.latency_s = std::max(p.latency_s, latency_s);
  }
  for (size_t i = 0; i < load.size(); ++i) {
    p.unit_s = std::max(p.unit_s, load[i] / platform_.links[i / 2].bw_per_direction);
  }
  return p;
}

const SimgridBackend::PatternPlan& SimgridBackend::plan(Pattern pattern, int group) {
  const size_t i = static_cast<size_t>(pattern) * static_cast<size_t>(cost_model_.parallel.gpus() + 1) +
                   static_cast<size_t>(group);
  if (!planned_[i]) {
    plans_[i] = make_plan(pattern, group);
    planned_[i] = 1;
  }
  return plans_[i];
}

void SimgridBackend::run_rooflines(int gpu, double compute_s, double hbm_bytes) {
  sg::Activities acts;
  acts.exec(gpu, compute_s * platform_.hosts[static_cast<size_t>(gpu)].speed_flops);
  acts.transfer(gpu, gpu, hbm_bytes);
  acts.wait_all();
}

// Starts the pattern's flows scaled so that alone they take time_s (the ledger's transfer time).
void SimgridBackend::start_pattern(sg::Activities& acts, Pattern pattern, int group, double time_s) {
  if (time_s <= 0) return;
  const PatternPlan& p = plan(pattern, group);
  if (p.unit_s <= 0) return;  // a group of one GPU: nothing crosses a link
  const double scale = time_s / p.unit_s;
  if (meter_ && pending_.empty()) pending_start_s_ = sg::now_s();
  for (const Flow& f : p.flows) {
    const double bytes = f.coef * scale;
    acts.transfer(f.src, f.dst, bytes);
    for (const sg::PlatformHop& h :
         platform_.routes[static_cast<size_t>(f.src)][static_cast<size_t>(f.dst)]) {
      const int dir = h.link * 2 + (h.up ? 0 : 1);
      link_bytes_[static_cast<size_t>(dir)] += bytes;
      if (meter_) pending_.push_back({dir, bytes});
    }
  }
}

void SimgridBackend::flush_meter() {
  if (!meter_) return;
  const double now = sg::now_s();
  for (const Pending& p : pending_) meter_->add(p.link_dir, pending_start_s_, now, p.bytes);
  pending_.clear();
}

// The step's ops in segments: each segment's compute ops run back to back on the compute stream while
// its collectives run on the comm stream; segments follow each other. Without overlap: one segment of
// every compute op, then one of every collective, one at a time (the ledger's sum).
void SimgridBackend::build_segments() {
  const auto add = [](Segment& s, std::initializer_list<Op> compute, std::initializer_list<Op> comm) {
    s.compute.insert(s.compute.end(), compute);
    s.comm.insert(s.comm.end(), comm);
  };
  std::vector<char> placed(kOpCount, 0);
  if (overlap_ >= Overlap::kTwoBatch) {  // one sub-batch's dispatch under the other's attention
    Segment s;
    add(s,
        {Op::kAProj, Op::kNormRopeKvWrite, Op::kQBProj, Op::kIndexerScore, Op::kTopkSelect, Op::kSparseMla,
         Op::kWindowAttn, Op::kOProj},
        {Op::kDispatch});
    segments_.push_back(s);
  }
  if (overlap_ >= Overlap::kDpGather) {  // DP gather / scatter beside the MoE (HBM vs NVLink)
    Segment s;
    add(s, {Op::kRouter, Op::kSharedExpert, Op::kExpertGemm},
        {Op::kCombine, Op::kDpAllgather, Op::kReduceScatter});
    segments_.push_back(s);
  } else if (overlap_ >= Overlap::kCombine) {  // combine in the second expert GEMM's shadow
    Segment s;
    add(s, {Op::kExpertGemm}, {Op::kCombine});
    segments_.push_back(s);
  }
  for (const Segment& s : segments_) {
    for (Op op : s.compute) placed[static_cast<size_t>(op)] = 1;
    for (Op op : s.comm) placed[static_cast<size_t>(op)] = 1;
  }
  Segment compute, comm;
  comm.serial = true;
  for (int i = 0; i < kOpCount; ++i) {
    if (placed[static_cast<size_t>(i)]) continue;
    (is_collective(static_cast<Op>(i)) ? comm.comm : compute.compute).push_back(static_cast<Op>(i));
  }
  // The remaining compute ops first (embedding, norms, dense MLP... in ledger order), then the overlapped
  // segments, then the remaining collectives one at a time; segments never overlap, so the order only
  // moves spans in the op-detail timeline, not the step time.
  segments_.insert(segments_.begin(), compute);
  segments_.push_back(comm);
}

// Step detail: per segment, compute-bound ops as one exec and memory-bound ops as one HBM transfer on the
// compute stream, collectives merged by (pattern, group) on the comm stream; all launches as one delay.
void SimgridBackend::run_merged(const StepCost& sc, int gpu) {
  double launch_s = 0;
  for (const Term& t : sc.terms) launch_s += t.time_s > 0 ? t.launch_s : 0;
  if (launch_s > 0) sg::sleep_for(launch_s);
  const size_t stride = static_cast<size_t>(cost_model_.parallel.gpus() + 1);
  for (const Segment& seg : segments_) {
    std::fill(pattern_s_.begin(), pattern_s_.end(), 0.0);
    for (Op op : seg.comm) {
      const Term& t = sc[op];
      if (t.time_s <= 0) continue;
      pattern_s_[static_cast<size_t>(pattern_of(op_collective(op))) * stride +
                 static_cast<size_t>(collective_group(op, cost_model_.parallel))] += link_time_s(t);
    }
    sg::Activities comm;
    for (size_t k = 0; k < pattern_s_.size(); ++k) {
      start_pattern(comm, static_cast<Pattern>(k / stride), static_cast<int>(k % stride), pattern_s_[k]);
      if (seg.serial) {
        comm.wait_all();
        flush_meter();
      }
    }
    double compute_s = 0, hbm_bytes = 0;
    for (Op op : seg.compute) {
      const Term& t = sc[op];
      if (t.time_s <= 0) continue;
      if (priced(t.source)) {
        compute_s += t.time_s;  // measured: the GPU is busy that long
      } else if (t.compute_s > t.memory_s) {
        compute_s += t.compute_s;
      } else {
        hbm_bytes += t.memory_s * cost_model_.hbm_bw;
      }
    }
    if (compute_s > 0) run_rooflines(gpu, compute_s, 0);
    if (hbm_bytes > 0) run_rooflines(gpu, 0, hbm_bytes);
    comm.wait_all();
    flush_meter();
  }
}

// Op detail: per segment, every collective starts with the segment and each compute op runs in turn with
// its launches after it; spans are measured in virtual time (a collective's end is seen when waited for,
// in ledger order).
void SimgridBackend::run_ops(const StepCost& sc, int gpu, StepOutcome& outcome) {
  const double step_start = sg::now_s();
  for (const Segment& seg : segments_) {
    if (seg.serial) {
      run_serial_ops(seg, sc, outcome, step_start);
    } else {
      run_overlapped_ops(seg, sc, gpu, outcome, step_start);
    }
  }
}

void SimgridBackend::push_span(StepOutcome& outcome, const StepCost& sc, Op op, double step_start,
                               double start) const {
  outcome.ops.push_back(OpSpan{.name = op_name(op).data(),
                               .stream = is_collective(op) ? Stream::kComm : Stream::kCompute,
                               .rank = sc.busiest_rank,
                               .start_s = start - step_start,
                               .duration_s = sg::now_s() - start,
                               .source = span_source(cost_model_, sc[op])});
}

// Collectives one after another, each with its launches after it.
void SimgridBackend::run_serial_ops(const Segment& seg, const StepCost& sc, StepOutcome& outcome,
                                    double step_start) {
  for (Op op : seg.comm) {
    const Term& t = sc[op];
    if (t.time_s <= 0) continue;
    const double start = sg::now_s();
    sg::Activities acts;
    start_pattern(acts, pattern_of(op_collective(op)), collective_group(op, cost_model_.parallel),
                  link_time_s(t));
    acts.wait_all();
    flush_meter();
    if (t.launch_s > 0) sg::sleep_for(t.launch_s);
    push_span(outcome, sc, op, step_start, start);
  }
}

// Every collective starts with the segment; compute ops run in turn beside them.
void SimgridBackend::run_overlapped_ops(const Segment& seg, const StepCost& sc, int gpu, StepOutcome& outcome,
                                        double step_start) {
  const double seg_start = sg::now_s();
  std::vector<std::unique_ptr<sg::Activities>> comm;
  for (Op op : seg.comm) {
    comm.push_back(std::make_unique<sg::Activities>());
    start_pattern(*comm.back(), pattern_of(op_collective(op)), collective_group(op, cost_model_.parallel),
                  sc[op].time_s > 0 ? link_time_s(sc[op]) : 0);
  }
  for (Op op : seg.compute) {
    const Term& t = sc[op];
    if (t.time_s <= 0) continue;
    const double start = sg::now_s();
    if (priced(t.source)) {
      run_rooflines(gpu, t.time_s, 0);
    } else {
      run_rooflines(gpu, t.compute_s, t.memory_s * cost_model_.hbm_bw);
    }
    if (t.launch_s > 0) sg::sleep_for(t.launch_s);
    push_span(outcome, sc, op, step_start, start);
  }
  for (size_t k = 0; k < comm.size(); ++k) {
    const Term& t = sc[seg.comm[k]];
    if (t.time_s <= 0) continue;
    comm[k]->wait_all();
    flush_meter();
    if (t.launch_s > 0) sg::sleep_for(t.launch_s);
    push_span(outcome, sc, seg.comm[k], step_start, seg_start);
  }
}

const StepCost& SimgridBackend::price_ahead(const StepBatches& step) {
  const double imbalance = noise_ ? noise_->expert_imbalance(step) : 1.0;
  last_cost_ = pricer_.price(cost_model_, step, imbalance);
  priced_ahead_ = true;
  return last_cost_;
}

// Write-through copies of the pages the last steps inserted: asynchronous in HiCache (write_backup on its
// own CUDA stream, cache_controller.py, v0.5.x), so the step starts them and goes on; they occupy the GPU's
// PCIe link toward host memory, the direction a prefill GPU's outgoing PD hand-offs and the write_back
// stores also take, until they finish.
void SimgridBackend::start_write_through(const StepBatches& step) {
  if (!write_through_) write_through_ = std::make_unique<sg::Activities>();
  write_through_->drop_finished();
  for (const Batch& b : step.ranks) {
    const auto bytes = static_cast<double>(b.host_async_store_bytes);
    if (bytes <= 0) continue;
    for (int t = 0; t < cost_model_.parallel.tp; ++t) {
      const int gpu = first_gpu_ + b.rank * cost_model_.parallel.tp + t;
      if (platform_.host_links[static_cast<size_t>(gpu)] >= 0)
        write_through_->host_transfer(gpu, bytes, false);
    }
  }
}

// Host-tier flows of the step: each rank's bytes on every GPU of the rank (MLA KV is replicated across its
// TP GPUs, each loading its own copy over its own PCIe link), host memory -> GPU for loads.
bool SimgridBackend::start_tier_flows(sg::Activities& acts, const StepBatches& step, bool loads) const {
  bool any = false;
  for (const Batch& b : step.ranks) {
    const double bytes = static_cast<double>(loads ? b.host_load_bytes : b.host_store_bytes);
    if (bytes <= 0) continue;
    for (int t = 0; t < cost_model_.parallel.tp; ++t) {
      const int gpu = first_gpu_ + b.rank * cost_model_.parallel.tp + t;
      if (platform_.host_links[static_cast<size_t>(gpu)] < 0) continue;
      acts.host_transfer(gpu, bytes, loads);
      any = true;
    }
  }
  return any;
}

double SimgridBackend::run_tier_flows(const StepBatches& step, bool loads) {
  sg::Activities acts;
  const double t0 = sg::now_s();
  if (!start_tier_flows(acts, step, loads)) return 0;
  const double latency = cost_model_.hardware.host_link_latency_s;
  if (latency > 0) sg::sleep_for(latency);
  acts.wait_all();
  return sg::now_s() - t0;
}

// The loads ran beside the forward; the forward's layers wait on their own layer's load (the analytic
// backend's overlap rule, cost/tier_transfer.h, over the time the flows took with their competition).
void SimgridBackend::finish_tier_loads(sg::Activities& loads, double load_start, double store_s,
                                       StepOutcome& outcome) {
  const double compute_end = sg::now_s();
  const double load_end = std::max(loads.wait_all_finish_s(), load_start);
  const double load_s = load_end - load_start + cost_model_.hardware.host_link_latency_s;
  const double compute_s = compute_end - load_start;
  const double stall =
      tier_load_stall_s(load_s, compute_s, cost_model_.model.layers, cost_model_.options.tier_load_overlap);
  const double end = load_start + compute_s + stall;
  if (end > sg::now_s()) sg::sleep_until(end);
  outcome.tier_load_s = load_s;
  outcome.tier_store_s = store_s;
  outcome.tier_stall_s = store_s + stall;
}

StepOutcome SimgridBackend::execute(const StepBatches& step) {
  if (!priced_ahead_) price_ahead(step);
  priced_ahead_ = false;
  const int gpu = first_gpu_ + last_cost_.busiest_rank * cost_model_.parallel.tp;
  StepOutcome outcome;
  const double start = sg::now_s();
  if (last_cost_.overhead_s > 0) sg::sleep_for(last_cost_.overhead_s);  // profile: CPU time not hidden
  start_write_through(step);
  const double store_s = run_tier_flows(step, false);  // write_back: the evictions' writes block first
  sg::Activities loads;
  const double load_start = sg::now_s();
  const bool loading = start_tier_flows(loads, step, true);
  const double gpu_start = sg::now_s();
  if (op_detail_) {
    run_ops(last_cost_, gpu, outcome);
  } else {
    run_merged(last_cost_, gpu);
  }
  // profile: a short step still runs its per-layer floor (the flows may have taken longer than priced)
  if (sg::now_s() - gpu_start < last_cost_.gpu_floor_s) sg::sleep_until(gpu_start + last_cost_.gpu_floor_s);
  if (loading) {
    finish_tier_loads(loads, load_start, store_s, outcome);
  } else {
    outcome.tier_store_s = store_s;
    outcome.tier_stall_s = store_s;
  }
  outcome.duration_s = sg::now_s() - start;
  if (noise_) noise_->accept_drafts(step, outcome.accepted_drafts);
  return outcome;
}

}  // namespace tokenline
