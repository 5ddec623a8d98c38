// ProcessPool: runs child processes (posix_spawn, no shell), at most `max_parallel` at once, and returns
// their exit codes in the order the jobs were given, whatever order they finish in. Used to run one
// `tokenline sim` per calibration point: SimGrid allows one simulation per process.
#pragma once

#include <string>
#include <vector>

namespace tokenline {

struct ProcessJob {
  std::vector<std::string> argv;  // argv[0]: the executable's path
  std::string log_path;           // the child's stdout and stderr go here (created or truncated)
};

// Exit status of each job, index for index: the exit code, or 128 + signal when a signal ended it, or 127
// when it could not be started. max_parallel >= 1.
std::vector<int> run_processes(const std::vector<ProcessJob>& jobs, int max_parallel);

// The reason a child gave for failing: the last non-empty line of its log `text` (its one-line message),
// or the line before CLI11's closing "Run with --help for more information."; "no output" when empty.
std::string log_reason(const std::string& text);

// The number of CPUs this process may use (at least 1).
int available_cpus();

}  // namespace tokenline
