// The transferred time source (time_source_transfer.h): a profile's measured-over-roofline ratio per op on
// its own GPU, applied to the target GPU's roofline; its engine and step terms as they are.
#include "cost/time_source_transfer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/input_error.h"
#include "cost/cost_model.h"
#include "cost/op_profile.h"
#include "cost/op_profile_pricing.h"
#include "cost/rank_work.h"
#include "cost/step_cost.h"
#include "cost/time_source.h"
#include "topologies/hardware.h"
#include "topologies/hardware_loader.h"

namespace tokenline {
namespace {

// Scales a target roofline term by the source's measured / roofline time of the same work, when the source
// measured it (its time source profile-priced it) and both rooflines are positive.
void transfer_term(const Term& source_roofline, const Term& source_measured, Term& t) {
  if (source_measured.source != TermSource::kProfile) return;
  if (!(source_roofline.time_s > 0) || !(t.time_s > 0)) return;
  t.time_s *= source_measured.time_s / source_roofline.time_s;
  t.launch_s = 0;
  t.source = TermSource::kTransferred;
  t.smaller_group = source_measured.smaller_group;
}

// Outside a CUDA graph every kernel is launched from the CPU (the engine's launch gap, a profile timing
// term): a term the source left on the roofline takes at least count x the gap, as under the profile.
void eager_floor(double gap_s, Terms& terms) {
  if (gap_s <= 0) return;
  for (Term& t : terms) {
    const double floor_s = double(t.count) * gap_s;
    if (floor_s <= t.time_s) continue;
    if (t.source == TermSource::kRoofline) t.launch_s += floor_s - t.time_s;
    t.time_s = floor_s;
  }
}

class TransferredTimeSource final : public TimeSource {
 public:
  explicit TransferredTimeSource(CostModel source) : source_(std::move(source)) {}

  bool measured() const override { return true; }

  void begin_step(const CostModel&, std::span<const std::span<const SeqWork>>,
                  StepPricing& step) const override {
    step.graph = true;
  }

  // The rank's work priced on the source GPU twice, at its roofline and by its profile; each op the profile
  // measured takes the ratio onto the target's roofline. The source's CUDA-graph padding and graph path
  // (the engine's) carry over as they are.
  void price_rank(const CostModel&, const RankWork& w, size_t r, StepPricing& step,
                  Terms& terms) const override {
    Terms roofline{};
    roofline_rank_terms(source_, w, 1.0, roofline);
    Terms measured = roofline;
    StepPricing source_step;
    source_step.graph = true;
    source_.time_source->price_rank(source_, w, r, source_step, measured);
    for (size_t i = 0; i < terms.size(); ++i) transfer_term(roofline[i], measured[i], terms[i]);
    step.graph = step.graph && source_step.graph;
    step.moe_tokens += source_step.moe_tokens;  // the padding to the graph's batch (0 otherwise)
    if (!source_step.graph) eager_floor(curves().eager_launch_gap_s, terms);
  }

  // The routed experts over every rank's (padded) tokens, likewise; `ex` is the target's roofline at the
  // unpadded tokens, so the target's is recomputed at the padded ones the ratio was measured at.
  void price_experts(const CostModel& cm, double expert_imbalance, const StepPricing& step, const Term&,
                     Term& ex) const override {
    if (step.moe_tokens <= 0 || ex.count <= 0) return;
    Term roofline{};
    roofline_expert_term(source_, step.moe_tokens, expert_imbalance, roofline);
    Term measured = roofline;
    price_experts_from_profile(source_, step.moe_tokens, expert_imbalance, step.graph, measured);
    Term target{};
    roofline_expert_term(cm, step.moe_tokens, expert_imbalance, target);
    transfer_term(roofline, measured, target);
    if (target.source != TermSource::kTransferred) return;
    ex.time_s = target.time_s;
    ex.launch_s = 0;
    ex.source = TermSource::kTransferred;
  }

  const CostModel& source() const { return source_; }

  // The engine's step terms (floor per layer, CPU per step and per request, overlap) as the profile prices
  // them: they describe the engine, not the GPU.
  void finish_step(const CostModel& cm, std::span<const std::span<const SeqWork>> per_rank,
                   int64_t draft_layers, StepCost& sc) const override {
    curves().finish_step(cm, per_rank, draft_layers, sc);
  }

 private:
  const ProfileCurves& curves() const { return profile_curves(source_); }
  CostModel source_;  // the model and layout on the profile's GPU, priced by the profile
};

}  // namespace

bool is_transfer_name(std::string_view name) {
  return name.substr(0, kTransferPrefix.size()) == kTransferPrefix;
}

std::string transfer_name(const std::string& profile) {
  return std::string(kTransferPrefix) + profile;
}

std::shared_ptr<OpProfile> load_transferred_profile(std::string_view name) {
  const std::string source(is_transfer_name(name) ? name.substr(kTransferPrefix.size()) : name);
  if (source.empty() || is_transfer_name(source))
    throw InputError("--profile " + std::string(name), "transfer:<a profile measured on some GPU>",
                     "'" + std::string(name) + "'");
  std::shared_ptr<OpProfile> p = load_op_profile(source);
  if (!p->table(ProfileTableKind::kOps).empty())
    throw InputError("--profile " + std::string(name),
                     "a profile of kernel tables (an own profile's ops table times one model on one machine)",
                     "the own profile " + source);
  p->transferred = true;
  p->name = transfer_name(source);
  // The engine sizes its pools from the GPU it runs on: the target's driver figure (engine_device_bytes).
  p->engine.device_memory_bytes = 0;
  return p;
}

double roofline_distance(const Hardware& a, const Hardware& b) {
  const auto ratio = [](double x, double y) { return x > 0 && y > 0 ? std::abs(std::log(x / y)) : 0.0; };
  return ratio(a.hbm_bw, b.hbm_bw) + ratio(a.peak_flops_fp8, b.peak_flops_fp8);
}

std::vector<std::string> transfer_sources(const std::string& engine, const Hardware& target) {
  // Embedded profiles are named <hardware>-<engine> (profile_for_engine's rule).
  const std::string suffix = "-" + engine;
  std::vector<std::pair<double, std::string>> found;
  for (const std::string& name : embedded_profile_names()) {
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string hardware = name.substr(0, name.size() - suffix.size());
    if (hardware == target.name) continue;
    found.emplace_back(roofline_distance(target, load_hardware(hardware)), name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& [distance, name] : found) names.push_back(std::move(name));
  return names;
}

const CostModel* transferred_source_model(const CostModel& cm) {
  const auto* t = dynamic_cast<const TransferredTimeSource*>(cm.time_source.get());
  return t != nullptr ? &t->source() : nullptr;
}

std::shared_ptr<const TimeSource> transferred_time_source(const CostModel& cm) {
  const OpProfile& p = *cm.options.profile;
  CostOptions options = cm.options;
  options.profile = nullptr;  // the roofline first; the profile's curves are resolved on its own GPU below
  CostModel source = make_cost_model(cm.model, cm.parallel, cm.kv_layout, load_hardware(p.hardware), options);
  source.options.profile = cm.options.profile;
  auto curves = std::const_pointer_cast<ProfileCurves>(resolve_profile(p, source));
  // The CUDA-graph sizes the engine derives for the GPU it runs on (memory band, layout), as the target's
  // memory rule reserves for them (resolve_profile derived them for the profile's GPU).
  if (p.param(TimingParam::kCudaGraphMaxBs) == 0 && p.has_engine) {
    curves->cuda_graph_max_bs =
        resolve_engine(p.engine, cm.hardware, cm.parallel.tp, cm.parallel.dp_attention).cuda_graph_max_bs;
  }
  source.time_source = std::move(curves);
  return std::make_shared<TransferredTimeSource>(std::move(source));
}

}  // namespace tokenline
