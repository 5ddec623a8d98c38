#include "sim/simgrid_backend.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <string>

#include "sim/simgrid_adapter.h"
#include "sim/simgrid_network.h"

namespace tokenline {
namespace {

constexpr int kPatternCount = 2;  // Pattern::kRing, Pattern::kAllToAll

const std::array<std::string, kOpCount>& op_names() {
  static const std::array<std::string, kOpCount> names = [] {
    std::array<std::string, kOpCount> n;
    for (int i = 0; i < kOpCount; ++i) n[static_cast<size_t>(i)] = std::string(op_name(static_cast<Op>(i)));
    return n;
  }();
  return names;
}

SeqWork to_seq_work(const BatchEntry& e) {
  return SeqWork{.new_tokens = e.new_tokens,
                 .context_tokens = e.context_tokens,
                 .prefill = e.phase == Phase::kPrefill,
                 .last_chunk = e.last_chunk};
}

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
                               bool op_detail)
    : cost_model_(cost_model),
      platform_(platform),
      first_gpu_(first_gpu),
      op_detail_(op_detail),
      plans_(static_cast<size_t>(kPatternCount * (cost_model.parallel.gpus() + 1))),
      planned_(plans_.size(), 0),
      link_bytes_(platform.links.size() * 2, 0.0) {
  assert(first_gpu + cost_model.parallel.gpus() <= platform.gpu_count() && "instance beyond the platform");
  op_names();
}

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
    for (const sg::PlatformHop& h : platform_.routes[static_cast<size_t>(f.src)][static_cast<size_t>(f.dst)]) {
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

// Runs the pattern's flows scaled so that alone they take time_s (the ledger's transfer time).
void SimgridBackend::run_pattern(Pattern pattern, int group, double time_s) {
  if (time_s <= 0) return;
  const PatternPlan& p = plan(pattern, group);
  if (p.unit_s <= 0) {  // a group of one GPU: nothing crosses a link
    sg::sleep_for(time_s);
    return;
  }
  const double scale = time_s / p.unit_s;
  sg::Activities acts;
  for (const Flow& f : p.flows) {
    const double bytes = f.coef * scale;
    acts.transfer(f.src, f.dst, bytes);
    for (const sg::PlatformHop& h : platform_.routes[static_cast<size_t>(f.src)][static_cast<size_t>(f.dst)]) {
      link_bytes_[static_cast<size_t>(h.link) * 2 + (h.up ? 0 : 1)] += bytes;
    }
  }
  acts.wait_all();
}

// Step detail: compute-bound ops as one exec, memory-bound ops as one HBM transfer, collectives merged by
// (pattern, group), all launches as one delay. Sums are exact: the ledger adds these terms.
void SimgridBackend::run_merged(const StepCost& sc, int gpu) {
  double compute_s = 0, hbm_bytes = 0, launch_s = 0;
  const int gpus = cost_model_.parallel.gpus();
  std::vector<double> pattern_s(static_cast<size_t>(kPatternCount * (gpus + 1)), 0.0);
  for (int i = 0; i < kOpCount; ++i) {
    const Op op = static_cast<Op>(i);
    const Term& t = sc[op];
    if (t.time_s <= 0) continue;
    launch_s += t.launch_s;
    if (is_collective(op)) {
      const int group = collective_group(op, cost_model_.parallel);
      pattern_s[static_cast<size_t>(pattern_of(op_collective(op))) * static_cast<size_t>(gpus + 1) +
                static_cast<size_t>(group)] += t.memory_s;
    } else if (t.compute_s > t.memory_s) {
      compute_s += t.compute_s;
    } else {
      hbm_bytes += t.memory_s * cost_model_.hbm_bw;
    }
  }
  if (launch_s > 0) sg::sleep_for(launch_s);
  if (compute_s > 0) run_rooflines(gpu, compute_s, 0);
  if (hbm_bytes > 0) run_rooflines(gpu, 0, hbm_bytes);
  for (size_t k = 0; k < pattern_s.size(); ++k) {
    const auto pattern = static_cast<Pattern>(k / static_cast<size_t>(gpus + 1));
    run_pattern(pattern, static_cast<int>(k % static_cast<size_t>(gpus + 1)), pattern_s[k]);
  }
}

// Op detail: each op in ledger order, its launches after it; spans are measured in virtual time.
void SimgridBackend::run_ops(const StepCost& sc, int gpu, StepOutcome& outcome) {
  const double step_start = sg::now_s();
  const auto& names = op_names();
  for (int i = 0; i < kOpCount; ++i) {
    const Op op = static_cast<Op>(i);
    const Term& t = sc[op];
    if (t.time_s <= 0) continue;
    const double start = sg::now_s();
    if (is_collective(op)) {
      run_pattern(pattern_of(op_collective(op)), collective_group(op, cost_model_.parallel), t.memory_s);
    } else {
      run_rooflines(gpu, t.compute_s, t.memory_s * cost_model_.hbm_bw);
    }
    if (t.launch_s > 0) sg::sleep_for(t.launch_s);
    outcome.ops.push_back(OpSpan{.name = names[static_cast<size_t>(i)].c_str(),
                                 .stream = is_collective(op) ? Stream::kComm : Stream::kCompute,
                                 .rank = sc.busiest_rank,
                                 .start_s = start - step_start,
                                 .duration_s = sg::now_s() - start});
  }
}

StepOutcome SimgridBackend::execute(const StepBatches& step) {
  const size_t ranks = step.ranks.size();
  if (work_.size() < ranks) work_.resize(ranks);
  rank_spans_.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    std::vector<SeqWork>& w = work_[r];
    w.clear();
    for (const BatchEntry& e : step.ranks[r].entries) w.push_back(to_seq_work(e));
    rank_spans_[r] = std::span<const SeqWork>(w);
  }
  last_cost_ = step_cost(cost_model_, std::span<const std::span<const SeqWork>>(rank_spans_));
  const int gpu = first_gpu_ + last_cost_.busiest_rank * cost_model_.parallel.tp;
  StepOutcome outcome;
  const double start = sg::now_s();
  if (op_detail_) {
    run_ops(last_cost_, gpu, outcome);
  } else {
    run_merged(last_cost_, gpu);
  }
  outcome.duration_s = sg::now_s() - start;
  return outcome;
}

}  // namespace tokenline
