// ChromeTraceReader: reads back the step and op spans of a trace.json written by tokenline (sim or run):
// per instance (process), the "step" spans in file order with their args, and the op spans written after
// each step on that instance. Times come back in seconds, rounded to the file's whole nanoseconds.
// Throws InputError naming the file (and event index) when the file is not such a trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tokenline {

struct RecordedOp {
  std::string name;
  int32_t rank = 0;
  bool comm = false;   // the rank's comm stream (else compute)
  double start_s = 0;  // relative to the step's start
  double duration_s = 0;
};

struct RecordedRankStep {
  int32_t rank = 0;
  int64_t tokens = 0;
  int64_t requests = 0;
};

struct RecordedStep {
  int64_t step = 0;  // the step index of the instance's plan
  double start_s = 0;
  double duration_s = 0;
  std::vector<RecordedRankStep> ranks;  // one per rank that computed (a "step" span each)
  std::vector<RecordedOp> ops;
};

struct RecordedInstance {
  int32_t pid = 0;
  std::vector<RecordedStep> steps;
};

struct RecordedRun {
  std::vector<RecordedInstance> instances;  // by pid order (instance i has pid i + 1)
};

RecordedRun read_recorded_run(const std::string& path);

// Whole nanoseconds of a time given in microseconds with 3 decimals, in seconds.
double trace_us_to_s(double us);

}  // namespace tokenline
