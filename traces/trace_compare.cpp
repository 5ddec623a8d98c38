#include "traces/trace_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "traces/latency_summary.h"

namespace tokenline {
namespace {

// An op name's time in one step: the maximum over ranks of the rank's summed spans of that name.
using OpTimes = std::map<std::string, double>;

struct JoinedStep {
  int32_t instance = 0;
  const RecordedStep* predicted = nullptr;
  const RecordedStep* measured = nullptr;
};

// The op names of `step` in first-appearance order, and their times.
std::vector<std::string> op_times(const RecordedStep& step, OpTimes* times) {
  std::map<std::string, std::map<int32_t, double>> per_rank;
  std::vector<std::string> order;
  for (const RecordedOp& op : step.ops) {
    auto [it, fresh] = per_rank.try_emplace(op.name);
    if (fresh) order.push_back(op.name);
    it->second[op.rank] += op.duration_s;
  }
  times->clear();
  for (const auto& [name, ranks] : per_rank) {
    double slowest = 0;
    for (const auto& [rank, s] : ranks) slowest = std::max(slowest, s);
    (*times)[name] = slowest;
  }
  return order;
}

// Joins the steps of two runs on (instance, step index), in the predicted run's order; counts the rest.
std::vector<JoinedStep> join_steps(const RecordedRun& predicted, const RecordedRun& measured,
                                   TraceComparison* out) {
  std::vector<JoinedStep> joined;
  int64_t predicted_total = 0, measured_total = 0;
  for (const RecordedInstance& inst : predicted.instances) predicted_total += std::ssize(inst.steps);
  for (const RecordedInstance& inst : measured.instances) measured_total += std::ssize(inst.steps);
  const size_t common = std::min(predicted.instances.size(), measured.instances.size());
  for (size_t i = 0; i < common; ++i) {
    std::map<int64_t, const RecordedStep*> by_index;
    for (const RecordedStep& s : measured.instances[i].steps) by_index.try_emplace(s.step, &s);
    std::set<int64_t> seen;
    for (const RecordedStep& s : predicted.instances[i].steps) {
      auto it = by_index.find(s.step);
      if (it == by_index.end() || !seen.insert(s.step).second) continue;
      joined.push_back(JoinedStep{static_cast<int32_t>(i), &s, it->second});
    }
  }
  out->joined_steps = std::ssize(joined);
  out->predicted_only_steps = predicted_total - out->joined_steps;
  out->measured_only_steps = measured_total - out->joined_steps;
  return joined;
}

// ---- decisions ----

// The rank's batch is known: recorded at op detail, or an idle rank's span (nothing to list).
bool batch_known(const RecordedRankStep& r) {
  return r.has_batch || (r.requests == 0 && r.tokens == 0);
}

bool same_batch(const RecordedRankStep& a, const RecordedRankStep& b) {
  if (a.batch.size() != b.batch.size()) return false;
  for (size_t i = 0; i < a.batch.size(); ++i)
    if (!a.batch[i].same_decision(b.batch[i])) return false;
  return true;
}

std::string describe(const RecordedRankStep& r, bool by_batch) {
  if (!by_batch) return std::to_string(r.tokens) + " tokens, " + std::to_string(r.requests) + " requests";
  if (r.batch.empty()) return "(idle)";
  std::string text;
  for (const RecordedEntry& e : r.batch) append_batch_entry(text, e);
  return text;
}

const RecordedRankStep* find_rank(const RecordedStep& step, int32_t rank) {
  for (const RecordedRankStep& r : step.ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

// Compares the decisions of one joined step rank by rank and counts it into `out`.
void compare_decisions(const JoinedStep& j, TraceComparison* out) {
  bool compared = false, by_batch = true;
  std::optional<DecisionMismatch> first;
  for (const RecordedRankStep& p : j.predicted->ranks) {
    const RecordedRankStep* m = find_rank(*j.measured, p.rank);
    if (m == nullptr) continue;
    compared = true;
    const bool batches = batch_known(p) && batch_known(*m);
    by_batch = by_batch && batches;
    const bool same = batches ? same_batch(p, *m) : p.tokens == m->tokens && p.requests == m->requests;
    if (!same && !first)
      first = DecisionMismatch{j.instance, j.predicted->step, p.rank, describe(p, batches),
                               describe(*m, batches)};
  }
  if (!compared) return;
  ++out->decision_steps;
  if (by_batch) ++out->decision_steps_by_batch;
  if (!first) return;
  ++out->differing_steps;
  if (out->first_differences.size() < kMaxListedDifferences) out->first_differences.push_back(*first);
}

// ---- times ----

// One row of the comparison while it accumulates: its totals and its per-step relative errors.
struct Row {
  TimeComparison totals;
  std::vector<double> errors;

  void add(std::optional<double> predicted_s, std::optional<double> measured_s) {
    if (!predicted_s && !measured_s) return;
    ++totals.steps;
    totals.predicted_steps += predicted_s ? 1 : 0;
    totals.measured_steps += measured_s ? 1 : 0;
    const double p = predicted_s.value_or(0), m = measured_s.value_or(0);
    totals.predicted_s += p;
    totals.measured_s += m;
    if (m > 0) errors.push_back(std::abs(p - m) / m);
  }
  static Row named(std::string name) {
    Row r;
    r.totals.name = std::move(name);
    return r;
  }
  TimeComparison finish() {
    const LatencySummary s = summarize(errors);
    totals.error = RelativeError{.samples = s.count, .mean = s.mean, .p50 = s.p50, .p90 = s.p90};
    return std::move(totals);
  }
};

std::optional<double> lookup(const OpTimes& times, const std::string& name) {
  auto it = times.find(name);
  return it == times.end() ? std::nullopt : std::optional<double>(it->second);
}

// The per-op rows over the joined steps: predicted names in first-appearance order, then measured-only ones.
std::vector<TimeComparison> compare_ops(const std::vector<JoinedStep>& joined) {
  std::vector<OpTimes> predicted(joined.size()), measured(joined.size());
  std::vector<std::string> names, measured_names;
  std::set<std::string> listed;
  for (size_t i = 0; i < joined.size(); ++i) {
    for (std::string& n : op_times(*joined[i].predicted, &predicted[i]))
      if (listed.insert(n).second) names.push_back(std::move(n));
    for (std::string& n : op_times(*joined[i].measured, &measured[i])) measured_names.push_back(std::move(n));
  }
  for (std::string& n : measured_names)
    if (listed.insert(n).second) names.push_back(std::move(n));
  std::vector<TimeComparison> rows;
  for (const std::string& name : names) {
    Row row = Row::named(name);
    for (size_t i = 0; i < joined.size(); ++i) row.add(lookup(predicted[i], name), lookup(measured[i], name));
    rows.push_back(row.finish());
  }
  return rows;
}

}  // namespace

double TimeComparison::ratio() const {
  return measured_s > 0 ? predicted_s / measured_s : std::numeric_limits<double>::quiet_NaN();
}

TraceComparison compare_runs(const RecordedRun& predicted, const RecordedRun& measured) {
  TraceComparison out;
  const std::vector<JoinedStep> joined = join_steps(predicted, measured, &out);
  Row steps = Row::named("step");
  for (const JoinedStep& j : joined) {
    compare_decisions(j, &out);
    steps.add(j.predicted->duration_s, j.measured->duration_s);
  }
  out.step = steps.finish();
  out.ops = compare_ops(joined);
  return out;
}

}  // namespace tokenline
