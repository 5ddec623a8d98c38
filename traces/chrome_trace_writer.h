// ChromeTraceWriter: streams a Chrome Trace Event Format file (opens in Perfetto and chrome://tracing).
// Layout: a process per instance, a thread per (rank, stream); complete "X" spans for steps and ops,
// async "b"/"e" spans per request, "s"/"f" flow arrows, "C" counters. Times are seconds in the API and
// microseconds with 3 decimals in the file (number_format.h), so output bytes are deterministic.
// Events are written in call order and never held in memory; the file appears only after finish(). A
// writer made without a path (--trace-detail none) writes nothing and every call returns at once.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "traces/trace_sink.h"

namespace tokenline {

// An arg's key is a literal that JSON takes as it is (no quote, backslash or control byte): it is written
// without the escape check values get.
struct TraceArg {
  std::string_view key;
  int64_t value;
};

// A text arg, written after the integer args (a step span's batch composition).
struct TraceText {
  std::string_view key;  // as TraceArg's
  std::string_view value;
};

enum class TraceStream { kCompute, kComm };

// Thread id of (rank, stream) inside an instance's process: compute and comm of a rank sit side by side.
inline int trace_tid(int rank, TraceStream stream) {
  return rank * 2 + (stream == TraceStream::kComm ? 1 : 0);
}

class ChromeTraceWriter {
 public:
  ChromeTraceWriter() = default;  // disabled: no file
  // Throws InputError when path is not writable.
  explicit ChromeTraceWriter(const std::string& path, TraceEncoding encoding = TraceEncoding::kPlain);

  bool enabled() const { return sink_ != nullptr; }

  void process_name(int pid, std::string_view name);
  void thread_name(int pid, int tid, std::string_view name);
  void complete(int pid, int tid, std::string_view name, double start_s, double duration_s,
                std::initializer_list<TraceArg> args = {});
  void complete(int pid, int tid, std::string_view name, double start_s, double duration_s,
                std::initializer_list<TraceArg> args, TraceText text);
  void async_begin(int pid, std::string_view category, int64_t id, std::string_view name, double time_s,
                   std::initializer_list<TraceArg> args = {});
  void async_end(int pid, std::string_view category, int64_t id, std::string_view name, double time_s);
  void flow_begin(int pid, int tid, int64_t id, double time_s);
  void flow_end(int pid, int tid, int64_t id, double time_s);
  void counter(int pid, std::string_view name, double time_s, std::initializer_list<TraceArg> series);

  int64_t events() const { return events_; }
  // Closes the JSON document and publishes the file; false when any write failed. True when disabled.
  bool finish();

 private:
  class EventText;  // one event's text, appended to the sink in one piece (chrome_trace_writer.cpp)
  void open_event(EventText& e, char phase, int pid, double time_s);
  void open_async(EventText& e, char phase, int pid, std::string_view category, int64_t id,
                  std::string_view name, double time_s);
  void append_flow(char phase, int pid, int tid, int64_t id, double time_s);
  void append_args(EventText& e, std::initializer_list<TraceArg> args, const TraceText* text = nullptr);
  void append_complete(EventText& e, int pid, int tid, std::string_view name, double start_s,
                       double duration_s);
  void close_event(EventText& e);

  std::unique_ptr<TraceSink> sink_;  // null: disabled
  int64_t events_ = 0;
};

}  // namespace tokenline
