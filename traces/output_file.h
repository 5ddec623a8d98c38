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

// The files a run writes into --out.
inline constexpr const char* kRunOutputNames[] = {"metrics.json", "requests.csv", "trace.json"};

// Called when a run starts, before it validates anything else: renames each run output already in `dir`
// to "<name>.previous" and removes leftover "<name>.partial" files, so that a run that then fails leaves
// no complete-looking file of an earlier run beside its failure. Nothing when `dir` does not exist.
// Throws InputError when a rename fails.
void retire_previous_outputs(const std::string& dir);
// Called once a run's outputs are committed: removes the "<name>.previous" files.
void remove_previous_outputs(const std::string& dir);

}  // namespace tokenline
