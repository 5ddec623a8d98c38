// The roofline time source, and the names an op's source is written under.
#include "cost/time_source.h"

#include "cost/cost_model.h"
#include "cost/step_cost.h"

namespace tokenline {
namespace {

// Every op at its roofline time, as step_cost computed it: nothing overlaid, nothing added.
class RooflineTimeSource final : public TimeSource {
 public:
  bool measured() const override { return false; }
  void begin_step(const CostModel&, std::span<const std::span<const SeqWork>>, StepPricing&) const override {}
  void price_rank(const CostModel&, const RankWork&, size_t, StepPricing&, Terms&) const override {}
  void price_experts(const CostModel&, double, const StepPricing&, const Term&, Term&) const override {}
  void finish_step(const CostModel&, std::span<const std::span<const SeqWork>>, int64_t,
                   StepCost&) const override {}
};

}  // namespace

std::shared_ptr<const TimeSource> roofline_time_source() {
  static const std::shared_ptr<const TimeSource> kRoofline = std::make_shared<RooflineTimeSource>();
  return kRoofline;
}

const char* span_source(const CostModel& cm, const Term& term) {
  return cm.time_source->measured() ? time_source_name(term.source).data() : nullptr;
}

std::string_view time_source_name(TermSource source) {
  switch (source) {
    case TermSource::kRoofline:
      return "roofline";
    case TermSource::kProfile:
      return "profile";
    case TermSource::kTransferred:
      return "transferred";
  }
  return "?";
}

double StepCost::collective_bytes() const {
  double sum = 0;
  for (int i = 0; i < kOpCount; ++i) sum += is_collective(Op(i)) ? terms[i].bytes_total : 0;
  return sum;
}

int64_t StepCost::collective_count() const {
  int64_t sum = 0;
  for (int i = 0; i < kOpCount; ++i) sum += is_collective(Op(i)) ? terms[i].count : 0;
  return sum;
}

double StepCost::flops() const {
  double sum = 0;
  for (const Term& t : terms) sum += t.flops;
  return sum;
}

}  // namespace tokenline
