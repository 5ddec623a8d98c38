#include "traces/trace_compare.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/traces/test_dir.h"
#include "traces/chrome_trace_writer.h"
#include "traces/trace_reader.h"

namespace tokenline {
namespace {

// One rank's step span: its batch text (op detail) or, when batch is "-", bare counts (step detail).
struct RankSpan {
  int rank = 0;
  std::string batch;
  int64_t tokens = 0;    // used only when batch is "-"
  int64_t requests = 0;  // used only when batch is "-"
};

RankSpan batch(int rank, std::string text) {
  return RankSpan{rank, std::move(text), 0, 0};
}
RankSpan counts(int rank, int64_t tokens, int64_t requests) {
  return RankSpan{rank, "-", tokens, requests};
}

struct OpSpan {
  const char* name;
  int rank;
  double duration_s;
};

struct StepSpec {
  int pid = 1;
  int64_t step = 0;
  double duration_s = 0;
  std::vector<RankSpan> ranks;
  std::vector<OpSpan> ops;
};

// Writes the steps as tokenline does: each step's rank spans, then its op spans back to back.
RecordedRun write_and_read(const std::string& path, const std::vector<StepSpec>& steps) {
  {
    ChromeTraceWriter w(path);
    double t = 0;
    for (const StepSpec& s : steps) {
      for (const RankSpan& r : s.ranks) {
        const int tid = trace_tid(r.rank, TraceStream::kCompute);
        if (r.batch == "-") {
          w.complete(s.pid, tid, "step", t, s.duration_s,
                     {{"step", s.step}, {"tokens", r.tokens}, {"requests", r.requests}});
          continue;
        }
        std::vector<RecordedEntry> entries;
        REQUIRE(parse_batch(r.batch, &entries));
        int64_t tokens = 0;
        for (const RecordedEntry& e : entries) tokens += e.new_tokens;
        w.complete(s.pid, tid, "step", t, s.duration_s,
                   {{"step", s.step}, {"tokens", tokens}, {"requests", static_cast<int64_t>(entries.size())}},
                   TraceText{"batch", r.batch});
      }
      double at = t;
      for (const OpSpan& op : s.ops) {
        w.complete(s.pid, trace_tid(op.rank, TraceStream::kCompute), op.name, at, op.duration_s);
        at += op.duration_s;
      }
      t += s.duration_s;
    }
    REQUIRE(w.finish());
  }
  return read_recorded_run(path);
}

const TimeComparison& row(const TraceComparison& c, const std::string& name) {
  for (const TimeComparison& r : c.ops)
    if (r.name == name) return r;
  FAIL("no row " << name);
  throw;
}

// Nearest-rank percentile of a sample, written out here so the test does not borrow the code under test.
double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// Three steps on two ranks. a_proj runs twice on rank 0 and once on rank 1 per step; the step waits for
// the slowest rank's sum (its max), not for the sum over ranks nor for the longest single span.
constexpr int kSteps = 3;
constexpr double kPredRank0[kSteps][2] = {{0.001, 0.002}, {0.001, 0.001}, {0.004, 0.001}};
constexpr double kPredRank1[kSteps] = {0.0025, 0.0035, 0.0010};
constexpr double kMeasRank0[kSteps][2] = {{0.002, 0.002}, {0.001, 0.002}, {0.002, 0.002}};
constexpr double kMeasRank1[kSteps] = {0.0010, 0.0040, 0.0080};
constexpr double kPredStep[kSteps] = {0.010, 0.012, 0.009};
constexpr double kMeasStep[kSteps] = {0.020, 0.010, 0.012};
constexpr double kPredEmbed = 0.0005, kMeasEmbed = 0.0004;
constexpr double kPredSample = 0.0001;  // predicted only
constexpr double kMeasDraft = 0.0003;   // measured only, in step 1

std::vector<StepSpec> two_rank_steps(bool measured) {
  std::vector<StepSpec> steps;
  for (int i = 0; i < kSteps; ++i) {
    StepSpec s{
        .pid = 1, .step = i, .duration_s = measured ? kMeasStep[i] : kPredStep[i], .ranks = {}, .ops = {}};
    s.ranks = {batch(0, "0d1 1d1"), batch(1, "2d1")};
    const auto& r0 = measured ? kMeasRank0[i] : kPredRank0[i];
    const double r1 = measured ? kMeasRank1[i] : kPredRank1[i];
    if (measured && i == 1) s.ops.push_back({"mtp_draft", 0, kMeasDraft});
    s.ops.push_back({"embed", 0, measured ? kMeasEmbed : kPredEmbed});
    s.ops.push_back({"a_proj", 0, r0[0]});
    s.ops.push_back({"a_proj", 1, r1});
    s.ops.push_back({"a_proj", 0, r0[1]});
    if (!measured) s.ops.push_back({"sample", 1, kPredSample});
    steps.push_back(s);
  }
  return steps;
}

}  // namespace

TEST_CASE("compare: an op's step time is the slowest rank's sum - totals, ratio and relative errors") {
  testing::TestDir dir("trace-compare");
  const RecordedRun pred = write_and_read(dir.file("pred.json"), two_rank_steps(false));
  const RecordedRun meas = write_and_read(dir.file("meas.json"), two_rank_steps(true));
  const TraceComparison c = compare_runs(pred, meas);
  CHECK(c.joined_steps == kSteps);
  CHECK(c.predicted_only_steps == 0);
  CHECK(c.measured_only_steps == 0);

  double pred_total = 0, meas_total = 0;
  std::vector<double> errors;
  for (int i = 0; i < kSteps; ++i) {
    const double p = std::max(kPredRank0[i][0] + kPredRank0[i][1], kPredRank1[i]);
    const double m = std::max(kMeasRank0[i][0] + kMeasRank0[i][1], kMeasRank1[i]);
    pred_total += p;
    meas_total += m;
    errors.push_back(std::abs(p - m) / m);
  }
  const TimeComparison& a = row(c, "a_proj");
  CHECK(a.steps == kSteps);
  CHECK(a.predicted_s == Approx(pred_total).epsilon(1e-12));
  CHECK(a.measured_s == Approx(meas_total).epsilon(1e-12));
  CHECK(a.ratio() == Approx(pred_total / meas_total).epsilon(1e-12));
  CHECK(a.error.samples == kSteps);
  CHECK(a.error.mean == Approx(mean(errors)).epsilon(1e-12));
  CHECK(a.error.p50 == Approx(percentile(errors, 50)).epsilon(1e-12));
  CHECK(a.error.p90 == Approx(percentile(errors, 90)).epsilon(1e-12));
  CHECK(a.error.p50 != Approx(a.error.p90));  // the inputs spread the errors

  const TimeComparison& embed = row(c, "embed");
  CHECK(embed.ratio() == Approx(kPredEmbed / kMeasEmbed).epsilon(1e-12));
  CHECK(embed.error.mean == Approx(std::abs(kPredEmbed - kMeasEmbed) / kMeasEmbed).epsilon(1e-12));

  const TimeComparison& sample = row(c, "sample");  // predicted only: no measured time, no ratio
  CHECK(sample.predicted_steps == kSteps);
  CHECK(sample.measured_steps == 0);
  CHECK(std::isnan(sample.ratio()));
  CHECK(sample.error.samples == 0);
  const TimeComparison& draft = row(c, "mtp_draft");  // measured only, in one step: 100 % error there
  CHECK(draft.steps == 1);
  CHECK(draft.predicted_s == 0);
  CHECK(draft.ratio() == 0);
  CHECK(draft.error.mean == Approx(1.0));

  // Predicted names in first-appearance order, then the measured-only one (first in its step).
  std::vector<std::string> names;
  for (const TimeComparison& r : c.ops) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"embed", "a_proj", "sample", "mtp_draft"});

  std::vector<double> step_errors;
  double pred_steps = 0, meas_steps = 0;
  for (int i = 0; i < kSteps; ++i) {
    pred_steps += kPredStep[i];
    meas_steps += kMeasStep[i];
    step_errors.push_back(std::abs(kPredStep[i] - kMeasStep[i]) / kMeasStep[i]);
  }
  CHECK(c.step.name == "step");
  CHECK(c.step.steps == kSteps);
  CHECK(c.step.ratio() == Approx(pred_steps / meas_steps).epsilon(1e-12));
  CHECK(c.step.error.mean == Approx(mean(step_errors)).epsilon(1e-12));
  CHECK(c.step.error.p90 == Approx(percentile(step_errors, 90)).epsilon(1e-12));
  CHECK(c.decision_steps == kSteps);
  CHECK(c.differing_steps == 0);
}

TEST_CASE("compare: steps join on (instance, step index), not on position - the rest is counted") {
  testing::TestDir dir("trace-compare-join");
  // Predicted: instance 1 steps 0..3 and instance 2 steps 0..1; measured: instance 1 steps 2..5 only.
  // Step i lasts (i + 1) ms predicted and (i + 1) * 3 ms measured, so a join on position would pair
  // predicted step 0 (1 ms) with measured step 2 (9 ms) and change every total.
  constexpr double kMs = 1e-3;
  auto step = [&](int pid, int64_t index, double scale) {
    const double d = static_cast<double>(index + 1) * kMs * scale;
    return StepSpec{.pid = pid,
                    .step = index,
                    .duration_s = d,
                    .ranks = {batch(0, "0d1")},
                    .ops = {{"expert_gemm", 0, d / 2}}};
  };
  std::vector<StepSpec> p, m;
  for (int64_t i = 0; i < 4; ++i) p.push_back(step(1, i, 1));
  for (int64_t i = 0; i < 2; ++i) p.push_back(step(2, i, 1));
  for (int64_t i = 2; i < 6; ++i) m.push_back(step(1, i, 3));
  const TraceComparison c =
      compare_runs(write_and_read(dir.file("p.json"), p), write_and_read(dir.file("m.json"), m));
  CHECK(c.joined_steps == 2);          // steps 2 and 3 of instance 1
  CHECK(c.predicted_only_steps == 4);  // steps 0, 1 of instance 1 and both of instance 2
  CHECK(c.measured_only_steps == 2);   // steps 4 and 5
  const double pred = (3 + 4) * kMs, meas = (3 + 4) * kMs * 3;
  CHECK(c.step.predicted_s == Approx(pred).epsilon(1e-12));
  CHECK(c.step.measured_s == Approx(meas).epsilon(1e-12));
  CHECK(c.step.ratio() == Approx(1.0 / 3).epsilon(1e-12));
  CHECK(c.step.error.mean == Approx(2.0 / 3).epsilon(1e-12));  // |1 - 3| / 3 in every joined step
  REQUIRE(c.ops.size() == 1);
  CHECK(c.ops[0].measured_s == Approx(meas / 2).epsilon(1e-12));

  const TraceComparison none = compare_runs(write_and_read(dir.file("p2.json"), {step(1, 0, 1)}),
                                            write_and_read(dir.file("m2.json"), {step(1, 7, 1)}));
  CHECK(none.joined_steps == 0);
  CHECK(none.predicted_only_steps == 1);
  CHECK(none.measured_only_steps == 1);
  CHECK(std::isnan(none.step.ratio()));
}

TEST_CASE("compare: different decisions are counted - MTP acceptances are outcomes, not decisions") {
  testing::TestDir dir("trace-compare-decisions");
  auto step = [](int64_t index, std::vector<RankSpan> ranks) {
    return StepSpec{.pid = 1, .step = index, .duration_s = 0.001, .ranks = std::move(ranks), .ops = {}};
  };
  const std::vector<StepSpec> p = {
      step(0, {batch(0, "0p16@0 1p8@0")}),
      step(1, {batch(0, "0d2+1 1d2+1")}),
      step(2, {batch(0, "0d1 1d1")}),
      step(3, {batch(0, "0d1"), counts(1, 0, 0)}),  // rank 1 idle (no batch arg)
      step(4, {counts(0, 5, 2)}),                   // step detail: counts only
      step(5, {counts(0, 5, 2)}),
      step(6, {batch(0, "0d1")}),
      step(7, {batch(1, "4d1")})};  // rank 1 only here, rank 0 only there: nothing to compare
  const std::vector<StepSpec> m = {
      step(0, {batch(0, "0p16@0 1p8@0")}), step(1, {batch(0, "0d2+0 1d2+1")}),
      step(2, {batch(0, "0d1 2p5@0")}),    step(3, {batch(0, "0d1"), batch(1, "3d1")}),
      step(4, {counts(0, 5, 2)}),          step(5, {counts(0, 6, 2)}),
      step(6, {batch(0, "0d1 1d1")}),      step(7, {batch(0, "4d1")})};
  const TraceComparison c =
      compare_runs(write_and_read(dir.file("p.json"), p), write_and_read(dir.file("m.json"), m));
  CHECK(c.joined_steps == 8);
  CHECK(c.decision_steps == 7);
  CHECK(c.decision_steps_by_batch == 5);
  CHECK(c.differing_steps == 4);  // steps 2, 3, 5, 6
  REQUIRE(c.first_differences.size() == kMaxListedDifferences);
  const DecisionMismatch& first = c.first_differences[0];
  CHECK(first.instance == 0);
  CHECK(first.step == 2);
  CHECK(first.rank == 0);
  CHECK(first.predicted == "0d1 1d1");
  CHECK(first.measured == "0d1 2p5@0");
  CHECK(c.first_differences[1].step == 3);
  CHECK(c.first_differences[1].rank == 1);
  CHECK(c.first_differences[1].predicted == "(idle)");
  CHECK(c.first_differences[2].step == 5);
  CHECK(c.first_differences[2].predicted == "5 tokens, 2 requests");
  CHECK(c.first_differences[2].measured == "6 tokens, 2 requests");
  CHECK(c.step.error.mean == 0);  // identical times: errors say nothing about decisions
}

}  // namespace tokenline
