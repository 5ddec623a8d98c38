#include "calibrate/trace_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "common/input_error.h"
#include "cost/op_profile.h"
#include "cost/op_profile_own.h"
#include "cost/step_cost.h"
#include "run/model_files.h"
#include "topologies/hardware_loader.h"
#include "traces/run_speed.h"
#include "traces/trace_reader.h"

namespace tokenline {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Where each appearance of a request is a prefill chunk that completes its prompt: the request's next
// appearance is a decode, or it has none (the trace records no last_chunk flag).
using EntryKey = std::pair<size_t, size_t>;  // (step index in the instance, position among its entries)

std::map<EntryKey, bool> last_chunks(const RecordedInstance& inst) {
  std::map<int64_t, EntryKey> pending;  // request -> its latest prefill entry not yet resolved
  std::map<EntryKey, bool> last;
  size_t pos = 0;
  for (size_t s = 0; s < inst.steps.size(); ++s) {
    pos = 0;
    for (const RecordedRankStep& r : inst.steps[s].ranks) {
      for (const RecordedEntry& e : r.batch) {
        const EntryKey key{s, pos++};
        auto it = pending.find(e.id);
        if (it != pending.end()) {
          last[it->second] = !e.prefill;
          pending.erase(it);
        }
        if (e.prefill) pending[e.id] = key;
      }
    }
  }
  for (const auto& [id, key] : pending) last[key] = true;
  return last;
}

// The sequences of one step, per attention rank, with decode contexts rebuilt from earlier steps.
std::vector<std::vector<SeqWork>> step_work(const RecordedInstance& inst, size_t s, int dp,
                                            const std::map<EntryKey, bool>& last,
                                            std::map<int64_t, int64_t>& context) {
  std::vector<std::vector<SeqWork>> ranks(static_cast<size_t>(dp));
  size_t pos = 0;
  for (const RecordedRankStep& r : inst.steps[s].ranks) {
    if (!r.has_batch && r.tokens > 0)
      throw InputError("--trace", "a trace with each step's batch (tokenline run --trace-detail op)",
                       "a step without one (step " + std::to_string(inst.steps[s].step) + ")");
    if (r.rank < 0 || r.rank >= dp)
      throw InputError("--trace", "ranks below the profile's DP degree " + std::to_string(dp),
                       "rank " + std::to_string(r.rank));
    for (const RecordedEntry& e : r.batch) {
      const EntryKey key{s, pos++};
      SeqWork w{.new_tokens = e.new_tokens, .context_tokens = 0, .prefill = e.prefill, .last_chunk = false};
      if (e.prefill) {
        w.context_tokens = e.context_tokens;
        auto it = last.find(key);
        w.last_chunk = it != last.end() && it->second;
      } else {
        w.context_tokens = context[e.id];
      }
      context[e.id] = w.context_tokens + w.new_tokens;
      ranks[static_cast<size_t>(r.rank)].push_back(w);
    }
  }
  return ranks;
}

CostModel own_cost_model(const TraceFitOptions& o, std::array<double, kOpCount>& scales, double& overhead_s) {
  auto profile = load_op_profile(o.profile);
  const std::string where = o.profile + "/profile.json";
  if (profile->table(ProfileTableKind::kOps).empty() || profile->measured_model.empty())
    throw InputError(where, "an own profile (tokenline profile: an ops table and measured_on)", "none");
  if (!o.speed_of.empty()) set_speed_from_run(*profile, run_speed_probe_s(o.speed_of), "--speed-of");
  const double speed = profile->param(TimingParam::kSpeedScale);
  scales = own_op_scales(*profile);
  for (double& s : scales) s *= speed;
  overhead_s = profile->param(TimingParam::kStepCpuOverheadS) * speed;
  profile->timing[static_cast<size_t>(TimingParam::kStepCpuOverheadS)] = 0;
  profile->timing[static_cast<size_t>(TimingParam::kOpTimeScale)] = 1;
  profile->timing[static_cast<size_t>(TimingParam::kSpeedScale)] = 1;
  profile->op_scales.clear();
  const Hardware hw = load_hardware(o.hardware.empty() ? o.profile + "/hardware.json" : o.hardware);
  const ModelConfig model = load_model(profile->measured_model);
  const Parallel parallel = parse_parallel(profile->measured_parallel, where + ": measured_on.parallel");
  const KvLayout layout = run_kv_layout(profile_engine(profile.get()), model, "", hw);
  CostOptions options;
  options.profile = std::move(profile);
  return make_cost_model(model, parallel, layout, hw, options);
}

// One measured step next to its pricing: per op, the priced time (every scale 1, no overhead) on the
// rank the pricing finds busiest, and the time that rank's op spans measured.
struct PricedStep {
  StepFit what;  // the step's index and rows (times filled in after the fit)
  double measured_s = 0;
  std::array<double, kOpCount> priced_s{}, measured_op_s{};
};

double predicted_s(const PricedStep& st, const std::array<double, kOpCount>& scales, double overhead_s) {
  double s = overhead_s;
  for (size_t i = 0; i < size_t(kOpCount); ++i) s += scales[i] * st.priced_s[i];
  return s;
}

StepError step_error(const std::vector<PricedStep>& steps, const std::array<double, kOpCount>& scales,
                     double overhead_s) {
  constexpr double kStretched = 2;  // measured / predicted beyond which a step counts as stretched
  std::vector<double> e;
  double all_s = 0, stretched_s = 0;
  for (const PricedStep& st : steps) {
    const double predicted = predicted_s(st, scales, overhead_s);
    e.push_back(std::abs(predicted - st.measured_s) / st.measured_s);
    all_s += st.measured_s;
    stretched_s += st.measured_s > kStretched * predicted ? st.measured_s : 0;
  }
  StepError r;
  r.stretched_time_share = stretched_s / all_s;
  for (double x : e) r.mape += x / double(e.size());
  std::sort(e.begin(), e.end());
  r.p90 = e[std::min(e.size() - 1, size_t(std::ceil(0.9 * double(e.size()))) - 1)];
  return r;
}

// The op spans of one rank (an attention group's first GPU rank), summed per ledger op.
std::array<double, kOpCount> rank_ops(const RecordedStep& step, int rank) {
  std::array<double, kOpCount> s{};
  for (const RecordedOp& op : step.ops) {
    if (op.rank != rank) continue;
    if (const std::optional<Op> i = find_op(op.name)) s[size_t(*i)] += op.duration_s;
  }
  return s;
}

StepFit describe(const RecordedStep& step, const std::vector<std::vector<SeqWork>>& work) {
  StepFit d{.step = step.step};
  for (const std::vector<SeqWork>& group : work) {
    d.busy_groups += group.empty() ? 0 : 1;
    for (const SeqWork& w : group) {
      (w.prefill ? d.prefill_rows : d.decode_rows) += 1;
      d.tokens += w.new_tokens;
    }
  }
  return d;
}

std::vector<PricedStep> priced_steps(const CostModel& cm, const RecordedRun& run, std::vector<double>& gaps) {
  std::vector<PricedStep> out;
  for (const RecordedInstance& inst : run.instances) {
    const std::map<EntryKey, bool> last = last_chunks(inst);
    std::map<int64_t, int64_t> context;
    for (size_t s = 0; s < inst.steps.size(); ++s) {
      const RecordedStep& step = inst.steps[s];
      const std::vector<std::vector<SeqWork>> work =
          step_work(inst, s, cm.parallel.dp_attention, last, context);
      std::vector<std::span<const SeqWork>> spans(work.begin(), work.end());
      const StepCost sc = step_cost(cm, spans);
      if (s + 1 < inst.steps.size())
        gaps.push_back(std::max(0.0, inst.steps[s + 1].start_s - (step.start_s + step.duration_s)));
      if (!(step.duration_s > 0) || !(sc.total_s > 0)) continue;
      PricedStep p{.what = describe(step, work),
                   .measured_s = step.duration_s,
                   .priced_s = {},
                   .measured_op_s = rank_ops(step, sc.busiest_rank)};
      for (int i = 0; i < kOpCount; ++i) p.priced_s[size_t(i)] = sc.terms[i].time_s;
      out.push_back(p);
    }
  }
  return out;
}

// The median of `ratios` weighted by `weights` (> 0): the smallest ratio whose cumulative weight reaches
// half.
double weighted_median(std::vector<std::pair<double, double>> ratios) {
  std::sort(ratios.begin(), ratios.end());
  double all = 0;
  for (const auto& [r, w] : ratios) all += w;
  double seen = 0;
  for (const auto& [r, w] : ratios) {
    seen += w;
    if (seen >= all / 2) return r;
  }
  return 1;
}

// Per op, the median over the steps that price it of measured / priced, each step weighted by its priced
// time: what the op's time typically is against the profile's, robust to the steps a shared machine's
// neighbours stretch (the mean of the ratios, or the ratio of the sums, follows them); without such steps it
// is near the ratio of the sums. The global scale is the same over every (step, op) pair.
void fit_op_scales(const std::vector<PricedStep>& steps, TraceFit& f) {
  std::array<std::vector<std::pair<double, double>>, kOpCount> ratios;
  std::vector<std::pair<double, double>> all;
  std::array<double, kOpCount> m{}, p{};
  for (const PricedStep& st : steps) {
    for (size_t i = 0; i < size_t(kOpCount); ++i) {
      if (!(st.priced_s[i] > 0)) continue;
      ratios[i].emplace_back(st.measured_op_s[i] / st.priced_s[i], st.priced_s[i]);
      all.push_back(ratios[i].back());
      m[i] += st.measured_op_s[i];
      p[i] += st.priced_s[i];
    }
  }
  f.op_time_scale = all.empty() ? 1 : weighted_median(all);
  f.ops.clear();
  for (size_t i = 0; i < size_t(kOpCount); ++i) {
    f.scales[i] = f.op_time_scale;
    if (!(m[i] > 0)) continue;  // an op the run did not measure (or did not price) keeps the global scale
    f.scales[i] = weighted_median(ratios[i]);
    f.ops.push_back(OpFit{.op = std::string(op_name(Op(i))),
                          .steps = int64_t(ratios[i].size()),
                          .measured_s = m[i],
                          .priced_s = p[i],
                          .scale = f.scales[i]});
  }
}

}  // namespace

TraceFit fit_trace(const TraceFitOptions& o) {
  std::array<double, kOpCount> loaded{};
  double overhead_s = 0;
  const CostModel cm = own_cost_model(o, loaded, overhead_s);
  const RecordedRun run = read_recorded_run(o.trace);
  std::vector<double> gaps;
  const std::vector<PricedStep> steps = priced_steps(cm, run, gaps);
  if (steps.empty()) throw InputError(o.trace, "a run trace with measured steps", "none");
  const bool has_ops = std::any_of(steps.begin(), steps.end(), [](const PricedStep& st) {
    return std::any_of(st.measured_op_s.begin(), st.measured_op_s.end(), [](double s) { return s > 0; });
  });
  if (!has_ops)
    throw InputError(o.trace, "op spans under its steps (tokenline run --trace-detail op)", "steps only");
  TraceFit f;
  f.steps = static_cast<int64_t>(steps.size());
  f.gap_s = median(gaps);
  f.run_speed_probe_s = trace_run_speed_probe_s(o.trace);
  fit_op_scales(steps, f);
  std::vector<double> residual_s;
  for (const PricedStep& st : steps) residual_s.push_back(st.measured_s - predicted_s(st, f.scales, 0));
  const double a = std::max(0.0, median(residual_s));
  f.step_cpu_overhead_s = a + f.gap_s;
  f.with_profile = step_error(steps, loaded, overhead_s);
  f.with_fit = step_error(steps, f.scales, a);
  for (const PricedStep& st : steps) {
    StepFit d = st.what;
    d.measured_s = st.measured_s;
    d.profile_s = predicted_s(st, loaded, overhead_s);
    d.fitted_s = predicted_s(st, f.scales, a);
    f.step_fits.push_back(d);
  }
  return f;
}

void write_step_fits(const std::string& path, const TraceFit& fit) {
  std::ofstream out(path, std::ios::trunc);
  out << "step,busy_groups,decode_rows,prefill_rows,tokens,measured_ms,profile_ms,fitted_ms,fitted_error\n";
  char line[256];
  for (const StepFit& d : fit.step_fits) {
    std::snprintf(line, sizeof line, "%lld,%d,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.4f\n",
                  static_cast<long long>(d.step), d.busy_groups, static_cast<long long>(d.decode_rows),
                  static_cast<long long>(d.prefill_rows), static_cast<long long>(d.tokens),
                  d.measured_s * 1e3, d.profile_s * 1e3, d.fitted_s * 1e3,
                  (d.fitted_s - d.measured_s) / d.measured_s);
    out << line;
  }
  if (!out) throw InputError(path, "a writable file", "a file that cannot be written");
}

void write_trace_fit(const std::string& profile_dir, const TraceFit& fit, const std::string& trace) {
  using Json = nlohmann::ordered_json;
  const std::filesystem::path path = std::filesystem::path(profile_dir) / "profile.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError(path.string(), "valid JSON", "unreadable");
  const std::string run = std::filesystem::path(trace).filename().string();
  std::ostringstream ops, step;
  ops << "tokenline calibrate --trace " << run
      << ": per op, the median of its measured time over its priced time (weighted by the priced time) over "
      << "the steps of " << fit.steps
      << " that price it (op_time_scale: the same over every op, for ops not listed)";
  step << "tokenline calibrate --trace " << run << ": median over " << fit.steps
       << " steps of measured - scaled priced ops, plus the median gap " << fit.gap_s << " s between steps";
  Json scales = Json::object();
  for (const OpFit& op : fit.ops) scales[op.op] = op.scale;
  j["timing"]["op_time_scale"] = Json{{"value", fit.op_time_scale}, {"unit", "ratio"}, {"source", ops.str()}};
  j["timing"]["op_scales"] = Json{{"value", scales}, {"unit", "ratio"}, {"source", ops.str()}};
  j["timing"]["step_cpu_overhead_s"] =
      Json{{"value", fit.step_cpu_overhead_s}, {"unit", "s"}, {"source", step.str()}};
  if (fit.run_speed_probe_s) {
    j["timing"]["speed_probe_s"] =
        Json{{"value", *fit.run_speed_probe_s},
             {"unit", "s"},
             {"source", "tokenline calibrate --trace " + run +
                            ": the run's machine speed probe (its metrics.json), the speed the fitted terms "
                            "describe"}};
  }
  std::ofstream out(path, std::ios::trunc);
  out << j.dump(2) << "\n";
  if (!out) throw InputError(path.string(), "a writable file", "a file that cannot be written");
}

}  // namespace tokenline
