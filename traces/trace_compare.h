// TraceComparison: a predicted run (tokenline sim) joined with a measured one (tokenline run), step by
// step and op by op, as read back by read_recorded_run (trace_reader.h).
// - Steps are joined on (instance index, step index); a step present on one side only is counted as
//   unmatched on that side and otherwise ignored. A step index recorded twice in an instance joins once
//   (its first occurrence; the later ones count as unmatched).
// - An op's time in a step is the maximum over ranks of that rank's summed spans of that name (compute and
//   comm streams together): the slowest rank bounds the step, so a per-rank sum is what the step waits
//   for, and a sum over ranks would grow with the rank count while the step does not.
// - A step's own time is its "step" span duration (the first rank's span; every rank's span of a step has
//   the same duration).
// - Decisions: a rank of a joined step is compared when it appears on both sides. Its decision is its
//   batch entry by entry (RecordedEntry::same_decision: MTP acceptances are outcomes, not decisions) when
//   both sides recorded one (op detail; an idle rank's empty span counts as an empty batch), else its
//   token and request counts. Runs whose decisions differ make per-step errors compare different batches.
// - Relative error of a step (or an op in a step) is |predicted - measured| / measured over joined steps
//   where the measured time is > 0; percentiles are nearest-rank (latency_summary.h).
// Pure function of its inputs; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace_reader.h"

namespace tokenline {

// Relative errors |pred - meas| / meas as fractions (0.1 = 10 %).
struct RelativeError {
  int64_t samples = 0;  // joined steps with a measured time > 0
  double mean = 0;      // MAPE as a fraction
  double p50 = 0;
  double p90 = 0;
};

// One op name (or the whole step) over the joined steps.
struct TimeComparison {
  std::string name;
  int64_t steps = 0;            // joined steps where it appears on either side
  int64_t predicted_steps = 0;  // ... on the predicted side
  int64_t measured_steps = 0;   // ... on the measured side
  double predicted_s = 0;       // summed over the joined steps
  double measured_s = 0;
  RelativeError error;
  // predicted_s / measured_s; NaN when nothing was measured.
  double ratio() const;
};

// A joined step whose decisions differ on some rank, described for a message.
struct DecisionMismatch {
  int32_t instance = 0;  // index (pid - 1)
  int64_t step = 0;
  int32_t rank = 0;
  std::string predicted;  // the rank's batch text, or "<tokens> tokens, <requests> requests"
  std::string measured;
};

struct TraceComparison {
  int64_t joined_steps = 0;
  int64_t predicted_only_steps = 0;  // steps with no measured counterpart
  int64_t measured_only_steps = 0;
  int64_t decision_steps = 0;           // joined steps with at least one rank on both sides
  int64_t decision_steps_by_batch = 0;  // ... of which every compared rank had batches on both sides
  int64_t differing_steps = 0;          // joined steps where some compared rank decided differently
  std::vector<DecisionMismatch> first_differences;  // up to kMaxListedDifferences, in join order
  TimeComparison step;                              // whole steps (name "step")
  std::vector<TimeComparison> ops;  // predicted first-appearance order, then measured-only names
};

// How many differing steps TraceComparison lists (the count covers all).
inline constexpr size_t kMaxListedDifferences = 3;

TraceComparison compare_runs(const RecordedRun& predicted, const RecordedRun& measured);

}  // namespace tokenline
