// SimgridBackend: the `simgrid` cost backend. Runs each step as SimGrid activities on a cluster platform
// (sim/simgrid/simgrid_platform.h), so transfers that share a link slow each other down. Work comes from the
// same token ledger as the analytic backend (step_cost): compute ops as a roofline on the busiest rank's GPU
// (an exec at peak speed plus an HBM loopback transfer), collectives as point-to-point flows between the
// instance's GPUs (rings for all-reduce / all-gather / reduce-scatter; per-node aggregate flows for
// all-to-all), launches as fixed delays. Flow bytes are calibrated so that, alone on the network, every
// collective takes exactly the ledger's time: with no competing traffic a step equals step_cost's total.
// execute() must run inside an actor of a SimEngine built on the same platform; it advances the virtual
// clock by the step itself, so the instance loop's sleep to the step's end returns at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cost/overlap.h"
#include "cost/step_cost.h"
#include "cost/step_noise.h"
#include "cost/step_pricer.h"
#include "sim/backends/sim_executor.h"
#include "sim/simgrid/simgrid_platform.h"

namespace tokenline {
namespace sg {
class Activities;
}
class LinkMeter;

class SimgridBackend final : public SimExecutor {
 public:
  // REQUIRES: cost_model and platform outlive the backend; first_gpu + gpus <= platform.gpu_count().
  // op_detail: run ops one by one and fill StepOutcome::ops with their measured spans; otherwise ops are
  // merged by roofline side and collectives by flow pattern (fewer activities, the same uncontended time).
  // noise: the same seeded per-step MoE skew and MTP acceptance draws as the analytic backend (instance
  // names its streams), so both backends see the same steps.
  SimgridBackend(const CostModel& cost_model, const sg::PlatformSpec& platform, int first_gpu, bool op_detail,
                 Overlap overlap = Overlap::kNone, const StepNoise& noise = {}, uint64_t seed = 0,
                 int32_t instance = 0);
  ~SimgridBackend() override;

  StepOutcome execute(const StepBatches& step) override;
  // Draws the step's noise and prices it before it runs (a PD layer stream times its layers by it); the
  // next execute() of the same step uses this price instead of drawing again.
  const StepCost& price_ahead(const StepBatches& step);
  const StepCost& last_cost() const { return last_cost_; }
  const StepCost* last_breakdown() const override { return &last_cost_; }
  // Bytes this backend's collectives put on each link direction: index link * 2 (up) or link * 2 + 1 (down).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  // Also report every collective's link bytes, over the time it was in flight, to `meter` (may be null).
  void set_meter(LinkMeter* meter) { meter_ = meter; }

  // One point-to-point flow of a collective's pattern: `coef` units of the pattern's scale.
  struct Flow {
    int src = 0;
    int dst = 0;
    double coef = 0;
  };
  enum class Pattern { kRing, kAllToAll };
  struct PatternPlan {
    std::vector<Flow> flows;
    double unit_s = 0;     // uncontended time of the pattern with scale 1 (slowest link's load / bandwidth)
    double latency_s = 0;  // the longest route latency among its flows (added once per run of the pattern)
  };
  // The flows of `pattern` over consecutive groups of `group` GPUs of this instance, all concurrent.
  const PatternPlan& plan(Pattern pattern, int group);

 private:
  struct Segment {
    std::vector<Op> compute;  // back to back on the compute stream
    std::vector<Op> comm;     // on the comm stream: concurrently, or one after another when serial
    bool serial = false;
  };
  bool start_tier_flows(sg::Activities& acts, const StepBatches& step, bool loads) const;
  void start_write_through(const StepBatches& step);
  double run_tier_flows(const StepBatches& step, bool loads);
  void finish_tier_loads(sg::Activities& loads, double load_start, double store_s, StepOutcome& outcome);
  void build_segments();
  void run_rooflines(int gpu, double compute_s, double hbm_bytes);
  void start_pattern(sg::Activities& acts, Pattern pattern, int group, double time_s);
  void flush_meter();  // after a wait: the started patterns' bytes went over [their start, now]
  void run_merged(const StepCost& sc, int gpu);
  void run_ops(const StepCost& sc, int gpu, StepOutcome& outcome);
  void run_serial_ops(const Segment& seg, const StepCost& sc, StepOutcome& outcome, double step_start);
  void run_overlapped_ops(const Segment& seg, const StepCost& sc, int gpu, StepOutcome& outcome,
                          double step_start);
  void push_span(StepOutcome& outcome, const StepCost& sc, Op op, double step_start, double start) const;
  PatternPlan make_plan(Pattern pattern, int group) const;

  const CostModel& cost_model_;
  const sg::PlatformSpec& platform_;
  int first_gpu_;
  bool op_detail_;
  Overlap overlap_;
  std::vector<Segment> segments_;
  std::vector<double> pattern_s_;   // scratch: seconds per (pattern, group) in one segment
  std::vector<PatternPlan> plans_;  // [pattern * (gpus + 1) + group], built on first use
  std::vector<char> planned_;
  StepPricer pricer_;
  std::vector<double> link_bytes_;
  LinkMeter* meter_ = nullptr;
  std::unique_ptr<StepNoiseSampler> noise_;  // null without skew or MTP
  struct Pending {
    int link_dir = 0;
    double bytes = 0;
  };
  std::vector<Pending> pending_;  // started, not yet reported to meter_
  double pending_start_s_ = 0;
  StepCost last_cost_;
  bool priced_ahead_ = false;  // last_cost_ is the next execute()'s price
  // Write-through copies in flight (GPU -> host, over the PCIe link's outgoing direction): started with a
  // step, never waited on; they slow what shares the link while they run.
  std::unique_ptr<sg::Activities> write_through_;
};

}  // namespace tokenline
