#include "calibrate/trace_fit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "common/input_error.h"
#include "engine/model/ledger.h"
#include "engine/model/op_profile.h"
#include "topologies/hardware_loader.h"
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

CostModel own_cost_model(const TraceFitOptions& o, double& scale, double& overhead_s) {
  auto profile = load_op_profile(o.profile);
  const std::string where = o.profile + "/profile.json";
  if (profile->table(ProfileTableKind::kOps).empty() || profile->measured_model.empty())
    throw InputError(where, "an own profile (tokenline profile: an ops table and measured_on)", "none");
  scale = profile->param(TimingParam::kOpTimeScale);
  overhead_s = profile->param(TimingParam::kStepCpuOverheadS);
  profile->timing[static_cast<size_t>(TimingParam::kStepCpuOverheadS)] = 0;
  profile->timing[static_cast<size_t>(TimingParam::kOpTimeScale)] = 1;
  const Hardware hw = load_hardware(o.hardware.empty() ? o.profile + "/hardware.json" : o.hardware);
  const ModelConfig model = load_model(profile->measured_model);
  const Parallel parallel = parse_parallel(profile->measured_parallel, where + ": measured_on.parallel");
  CostOptions options;
  options.profile = std::move(profile);
  return make_cost_model(model, parallel, model.default_kv_layout, hw, options);
}

StepError step_error(const std::vector<double>& priced, const std::vector<double>& measured, double scale,
                     double overhead_s) {
  std::vector<double> e;
  for (size_t i = 0; i < measured.size(); ++i)
    e.push_back(std::abs(scale * priced[i] + overhead_s - measured[i]) / measured[i]);
  StepError r;
  for (double x : e) r.mape += x / double(e.size());
  std::sort(e.begin(), e.end());
  r.p90 = e[std::min(e.size() - 1, size_t(std::ceil(0.9 * double(e.size()))) - 1)];
  return r;
}

// Least squares of measured = s x priced + a with both >= 0. Unweighted, so the fitted steps sum to the
// measured run (what request latencies add up); a negative intercept leaves the scale alone to do it.
void fit_terms(const std::vector<double>& p, const std::vector<double>& m, double& s, double& a) {
  const double n = double(m.size());
  double sp = 0, sm = 0, spp = 0, spm = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    sp += p[i];
    sm += m[i];
    spp += p[i] * p[i];
    spm += p[i] * m[i];
  }
  const double det = n * spp - sp * sp;
  s = det > 0 ? (n * spm - sp * sm) / det : 0;
  a = det > 0 ? (sm - s * sp) / n : 0;
  if (a < 0 || s <= 0) {
    a = 0;
    s = sp > 0 ? sm / sp : 1;
  }
}

}  // namespace

TraceFit fit_trace(const TraceFitOptions& o) {
  double scale = 1, overhead_s = 0;
  const CostModel cm = own_cost_model(o, scale, overhead_s);
  const RecordedRun run = read_recorded_run(o.trace);
  const int dp = cm.parallel.dp_attention;
  std::vector<double> gaps, priced, measured;
  for (const RecordedInstance& inst : run.instances) {
    const std::map<EntryKey, bool> last = last_chunks(inst);
    std::map<int64_t, int64_t> context;
    for (size_t s = 0; s < inst.steps.size(); ++s) {
      const RecordedStep& step = inst.steps[s];
      const std::vector<std::vector<SeqWork>> work = step_work(inst, s, dp, last, context);
      std::vector<std::span<const SeqWork>> spans(work.begin(), work.end());
      const double p = step_cost(cm, spans).total_s;
      if (s + 1 < inst.steps.size())
        gaps.push_back(std::max(0.0, inst.steps[s + 1].start_s - (step.start_s + step.duration_s)));
      if (!(step.duration_s > 0) || !(p > 0)) continue;
      priced.push_back(p);
      measured.push_back(step.duration_s);
    }
  }
  if (measured.empty()) throw InputError(o.trace, "a run trace with measured steps", "none");
  TraceFit f;
  f.steps = static_cast<int64_t>(measured.size());
  f.gap_s = median(gaps);
  double a = 0;
  fit_terms(priced, measured, f.op_time_scale, a);
  f.step_cpu_overhead_s = a + f.gap_s;
  f.with_profile = step_error(priced, measured, scale, overhead_s);
  f.with_fit = step_error(priced, measured, f.op_time_scale, a);
  return f;
}

void write_trace_fit(const std::string& profile_dir, const TraceFit& fit, const std::string& trace) {
  using Json = nlohmann::ordered_json;
  const std::filesystem::path path = std::filesystem::path(profile_dir) / "profile.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError(path.string(), "valid JSON", "unreadable");
  std::ostringstream source;
  source << "tokenline calibrate --trace " << std::filesystem::path(trace).filename().string()
         << ": least squares of the relative step error over " << fit.steps
         << " steps (measured = op_time_scale x priced ops + step_cpu_overhead_s), plus the median gap "
         << fit.gap_s << " s between steps";
  j["timing"]["op_time_scale"] =
      Json{{"value", fit.op_time_scale}, {"unit", "ratio"}, {"source", source.str()}};
  j["timing"]["step_cpu_overhead_s"] =
      Json{{"value", fit.step_cpu_overhead_s}, {"unit", "s"}, {"source", source.str()}};
  std::ofstream out(path, std::ios::trunc);
  out << j.dump(2) << "\n";
  if (!out) throw InputError(path.string(), "a writable file", "a file that cannot be written");
}

}  // namespace tokenline
