// ChromeTraceReader: reads back the step and op spans of a trace.json (or trace.json.gz, --trace-gzip)
// written by tokenline (sim or run):
// per instance (process), the "step" spans in file order with their args, and the op spans written after
// each step on that instance. Times come back in seconds, rounded to the file's whole nanoseconds.
// Throws InputError naming the file (and event index) when the file is not such a trace, or when a span's
// ts or dur is not a time in [0, limits::kMaxSimulatedS] (a negative or 1e308 span is not a measurement).
// The file is streamed (SAX, 64 KiB at a time, gzip inflated on the way): memory holds the steps and ops
// read back and one event, never the document, so a 255 MB trace no longer takes 2.4 GB.
// Also owns the grammar of a step span's "batch" arg (written at op detail): the rank's batch entries in
// batch order, separated by one space, each <id>p<new_tokens>@<context_tokens> (a prefill chunk after
// context_tokens already in KV: cached prefix and earlier chunks) or <id>d<new_tokens> (a decode step),
// followed by +<accepted> when MTP drafts were verified (the drafts that stood: an outcome the replay
// returns, not a decision it checks), e.g. "12p64@32 40d1 7d2+1".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tokenline {

// One entry of a recorded batch: what the scheduler decided for one request in one step.
struct RecordedEntry {
  int64_t id = 0;
  bool prefill = false;
  int64_t new_tokens = 0;
  int64_t context_tokens = 0;  // prefill only (0 for decode: not recorded)
  int32_t accepted = -1;       // decode with MTP: drafts accepted (-1: not recorded)
  bool operator==(const RecordedEntry&) const = default;
  // The scheduler's decision alone (accepted is the step's outcome).
  bool same_decision(const RecordedEntry& o) const {
    return id == o.id && prefill == o.prefill && new_tokens == o.new_tokens &&
           context_tokens == o.context_tokens;
  }
};

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
  bool has_batch = false;            // the span had a "batch" arg (op detail)
  std::vector<RecordedEntry> batch;  // in batch order; empty unless has_batch
};

struct RecordedStep {
  int64_t step = 0;  // the step index of the instance's plan
  double start_s = 0;
  double duration_s = 0;
  std::vector<RecordedRankStep> ranks;  // one per rank that computed (a "step" span each)
  std::vector<RecordedOp> ops;
  // The host KV tier's spans of the step ("kv_load_host", "kv_store_host" on the instance's host-link
  // thread; docs/kv-tiers.md): their durations and the stall they caused (part of duration_s).
  double tier_load_s = 0;
  double tier_store_s = 0;
  double tier_stall_s = 0;
};

struct RecordedInstance {
  int32_t pid = 0;
  std::vector<RecordedStep> steps;
};

struct RecordedRun {
  std::vector<RecordedInstance> instances;  // by pid order (instance i has pid i + 1)
};

RecordedRun read_recorded_run(const std::string& path);

// The text of one whole gzip stream (a trace.json.gz), handed to zlib at most `max_in_bytes` at a time:
// zlib counts input in 32-bit units, so a file past 4 GiB goes in parts (0: the most zlib takes at once).
// Throws InputError naming `path` when the bytes are not a whole gzip stream.
std::string inflate_gzip(const std::string& bytes, const std::string& path, size_t max_in_bytes = 0);

// Appends one entry in the "batch" grammar, preceded by a space unless `out` is empty.
void append_batch_entry(std::string& out, const RecordedEntry& entry);
// The entries of a "batch" arg; false (out unspecified) when `text` does not follow the grammar.
bool parse_batch(std::string_view text, std::vector<RecordedEntry>* out);
// One entry as it appears in a "batch" arg (for messages).
std::string to_string(const RecordedEntry& entry);

// Whole nanoseconds of a time given in microseconds with 3 decimals, in seconds.
double trace_us_to_s(double us);

}  // namespace tokenline
