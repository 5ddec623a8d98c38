// TraceSink: where ChromeTraceWriter's bytes go: an OutputFile as they are, or gzip-compressed into one
// (zlib, fastest level; the header has no name and mtime 0, so the same text gives the same bytes). The
// caller appends to buffer() and calls maybe_flush() now and then; at most about two MiB of text and its
// compressed form are resident. The file appears only after commit() (OutputFile). Single-threaded.
#pragma once

#include <memory>
#include <string>

#include "traces/output_file.h"

namespace tokenline {

enum class TraceEncoding { kPlain, kGzip };

class TraceSink {
 public:
  // Throws InputError naming `path` when it cannot be created.
  TraceSink(std::string path, TraceEncoding encoding);
  ~TraceSink();
  TraceSink(const TraceSink&) = delete;
  TraceSink& operator=(const TraceSink&) = delete;

  std::string& buffer() { return encoding_ == TraceEncoding::kPlain ? file_.buffer() : text_; }
  void maybe_flush();
  // Returns false (and keeps the final name absent) when compressing or writing failed.
  bool commit();

 private:
  struct Deflater;                                          // zlib's stream, kept out of this header
  static constexpr size_t kDeflateBytes = size_t{1} << 20;  // 1 MiB of text per deflate call
  void deflate_text(bool finish);

  OutputFile file_;
  TraceEncoding encoding_;
  std::string text_;  // gzip: text not yet compressed
  std::unique_ptr<Deflater> deflater_;
  bool failed_ = false;
};

}  // namespace tokenline
