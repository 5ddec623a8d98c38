// open_workload: turns the --workload argument into a streaming WorkloadSource.
//   synthetic:<spec>        generator (synthetic_spec.h)
//   mooncake:<path>         Mooncake JSONL      azure:<path>   Azure CSV      tokenline:<path>  tokenline
//   JSONL default                 the embedded 200-request head of the Mooncake conversation trace <path> by
//   content: a first line "TIMESTAMP,..." is Azure; a JSON first line with
//                           "timestamp" is Mooncake, otherwise tokenline JSONL
//   embedded:<file>         a file of workloads/data/ compiled in (embedded:azure_conv_head1000.jsonl, the
//                           chat workload `tokenline sim` takes by default), Mooncake or tokenline JSONL
// A workload that is not a regular file (a FIFO, a pipe, /dev/stdin) can be read only once, so its first
// open reads it whole into the options' StreamCache (at most limits::kMaxStreamedWorkloadBytes) and every
// later open of the same options (describe, prevalidate, run) reads that copy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "workloads/trace_reader.h"
#include "workloads/workload_window.h"

namespace tokenline {

// The contents of non-regular workload files, by path, read at their first open. Shared by copies of
// one WorkloadOptions; single-threaded.
struct StreamCache {
  std::map<std::string, std::string> text_by_path;
};

struct WorkloadOptions {
  ReaderOptions reader;  // skip_bad_lines
  WindowOptions window;  // time scale, start/duration, max requests, closed loop
  uint64_t seed = 0;     // synthetic generators without seed=
  std::shared_ptr<StreamCache> streams = std::make_shared<StreamCache>();
};

// Throws InputError for an unknown form, an unreadable file or bad options; bad lines surface from next().
std::unique_ptr<WorkloadSource> open_workload(const std::string& spec, const WorkloadOptions& options);

// The embedded default workload's text (Mooncake JSONL, 200 lines).
std::string_view default_workload_text();

}  // namespace tokenline
