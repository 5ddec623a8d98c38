// OutputFile: a buffered output file that appears under its final name only when complete. Bytes go to
// "<path>.partial"; commit() flushes and renames it; destruction without commit() removes the partial file,
// so a failed run never leaves a half-written output behind. Single-threaded; owns its FILE*.
#pragma once

#include <cstdio>
#include <string>

namespace tokenline {

class OutputFile {
 public:
  // Throws InputError naming `path` when the partial file cannot be created.
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // The caller appends to buffer() and calls maybe_flush() now and then; commit() writes the rest.
  std::string& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  // Returns false (and keeps the final name absent) when any write, the close or the rename failed.
  bool commit();
  const std::string& path() const { return path_; }

 private:
  static constexpr size_t kFlushBytes = size_t{1} << 20;  // 1 MiB: few syscalls, small resident buffer
  void flush();

  std::string path_;
  std::string partial_path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  bool failed_ = false;
  bool committed_ = false;
};

// Throws InputError unless `dir` exists (or can be created) and a file can be created and removed in it.
void require_writable_directory(const std::string& dir);

// The files a run writes into --out (trace.json.gz with --trace-gzip, links.json with --backend simgrid).
inline constexpr const char* kRunOutputNames[] = {"metrics.json", "requests.csv", "trace.json",
                                                  "trace.json.gz", "links.json"};

// Renames each run output already in `dir` to "<name>.previous" and removes leftover "<name>.partial"
// files (RunOutputs calls it under the directory's lock, so no other run's partial files are there).
// Nothing when `dir` does not exist. Throws InputError when a rename fails.
void retire_previous_outputs(const std::string& dir);
// Called once a run's outputs are committed: removes the "<name>.previous" files.
void remove_previous_outputs(const std::string& dir);
// Called when a run failed: removes what it published and every partial file, and renames each
// "<name>.previous" back, so the directory holds the earlier run's outputs as they were.
void restore_previous_outputs(const std::string& dir);

// RunOutputs: one run's claim on its --out directory, taken once every flag has been judged (nothing
// touches the directory before). The constructor creates the directory, takes an advisory lock on
// "<dir>/.tokenline.lock" (flock: released when the process ends, however it ends) so that a second run
// into the same directory is refused (InputError naming the directory) instead of mixing its files with
// this one's, checks that a file can be written there, and retires the earlier outputs. commit(), once the
// run has published every file, removes the earlier outputs; destruction without commit() puts them back
// (restore_previous_outputs). The lock file stays: removing it would let two runs lock two different files.
// Single-threaded; one per run.
class RunOutputs {
 public:
  explicit RunOutputs(std::string dir);
  ~RunOutputs();
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;
  void commit();

 private:
  std::string dir_;
  int lock_fd_ = -1;
  bool committed_ = false;
};

}  // namespace tokenline
