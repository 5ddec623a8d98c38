#include "traces/chrome_trace_writer.h"

#include <cassert>
#include <cstring>

#include "traces/number_format.h"

namespace tokenline {
namespace {

constexpr double kMicrosecondsPerSecond = 1e6;
constexpr int kTimeDecimals = 3;  // nanosecond resolution in microsecond units

}  // namespace

// One event's text, built in a buffer on the stack and appended to the sink's text in one piece: an event
// is a few dozen short pieces, each otherwise its own append. A piece that does not fit flushes the buffer
// first; text longer than the whole buffer (a step's batch composition) is appended directly.
class ChromeTraceWriter::EventText {
 public:
  explicit EventText(std::string& out) : out_(out) {}
  EventText(const EventText&) = delete;
  EventText& operator=(const EventText&) = delete;
  ~EventText() { flush(); }

  // A string literal: its size is known here, so the copy is a few moves.
  template <size_t N>
  void text(const char (&s)[N]) {
    static_assert(N - 1 <= kBufferBytes, "a literal longer than the event buffer");
    if (N - 1 > room()) flush();
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  void text(std::string_view s) {
    if (s.size() > room() && (flush(), s.size() > room())) {
      out_.append(s);
      return;
    }
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void ch(char c) {
    if (room() == 0) flush();
    *p_++ = c;
  }
  void integer(int64_t v) {
    if (room() < kMaxNumberChars) flush();
    p_ = put_int(p_, v);
  }
  void fixed(double v, int decimals) {
    if (room() < kMaxNumberChars) flush();
    p_ = put_fixed(p_, v, decimals);
  }
  void key(std::string_view s) {  // TraceArg's: JSON as it is
    assert(json_plain(s) && "a trace arg key that JSON must escape");
    quoted(s);
  }
  void json_string(std::string_view s) {
    if (json_plain(s)) {
      quoted(s);
      return;
    }
    flush();
    append_json_string(out_, s);
  }
  void flush() {
    out_.append(buffer_, static_cast<size_t>(p_ - buffer_));
    p_ = buffer_;
  }

 private:
  size_t room() const { return static_cast<size_t>(buffer_ + sizeof buffer_ - p_); }
  void quoted(std::string_view s) {  // s needs no escaping
    ch('"');
    text(s);
    ch('"');
  }

  static constexpr size_t kBufferBytes = 512;
  std::string& out_;
  char buffer_[kBufferBytes];
  char* p_ = buffer_;
};

ChromeTraceWriter::ChromeTraceWriter(const std::string& path, TraceEncoding encoding)
    : sink_(std::make_unique<TraceSink>(path, encoding)) {
  sink_->buffer().append("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
}

void ChromeTraceWriter::open_event(EventText& e, char phase, int pid, double time_s) {
  if (events_ == 0)
    e.text("{\"ph\":\"");
  else
    e.text(",\n{\"ph\":\"");
  e.ch(phase);
  e.text("\",\"pid\":");
  e.integer(pid);
  e.text(",\"ts\":");
  e.fixed(time_s * kMicrosecondsPerSecond, kTimeDecimals);
  ++events_;
}

void ChromeTraceWriter::append_args(EventText& e, std::initializer_list<TraceArg> args,
                                    const TraceText* text) {
  if (args.size() == 0 && text == nullptr) return;
  e.text(",\"args\":{");
  bool first = true;
  for (const TraceArg& arg : args) {
    if (!first) e.ch(',');
    first = false;
    e.key(arg.key);
    e.ch(':');
    e.integer(arg.value);
  }
  if (text != nullptr) {
    if (!first) e.ch(',');
    e.key(text->key);
    e.ch(':');
    e.json_string(text->value);
  }
  e.ch('}');
}

void ChromeTraceWriter::close_event(EventText& e) {
  e.ch('}');
  e.flush();
  sink_->maybe_flush();
}

void ChromeTraceWriter::process_name(int pid, std::string_view name) {
  if (!sink_) return;
  EventText e(sink_->buffer());
  open_event(e, 'M', pid, 0);
  e.text(",\"name\":\"process_name\",\"args\":{\"name\":");
  e.json_string(name);
  e.ch('}');
  close_event(e);
}

void ChromeTraceWriter::thread_name(int pid, int tid, std::string_view name) {
  if (!sink_) return;
  EventText e(sink_->buffer());
  open_event(e, 'M', pid, 0);
  e.text(",\"tid\":");
  e.integer(tid);
  e.text(",\"name\":\"thread_name\",\"args\":{\"name\":");
  e.json_string(name);
  e.ch('}');
  close_event(e);
}

void ChromeTraceWriter::append_complete(EventText& e, int pid, int tid, std::string_view name, double start_s,
                                        double duration_s) {
  open_event(e, 'X', pid, start_s);
  e.text(",\"dur\":");
  e.fixed(duration_s * kMicrosecondsPerSecond, kTimeDecimals);
  e.text(",\"tid\":");
  e.integer(tid);
  e.text(",\"name\":");
  e.json_string(name);
}

void ChromeTraceWriter::complete(int pid, int tid, std::string_view name, double start_s, double duration_s,
                                 std::initializer_list<TraceArg> args) {
  if (!sink_) return;
  EventText e(sink_->buffer());
  append_complete(e, pid, tid, name, start_s, duration_s);
  append_args(e, args);
  close_event(e);
}

void ChromeTraceWriter::complete(int pid, int tid, std::string_view name, double start_s, double duration_s,
                                 std::initializer_list<TraceArg> args, TraceText text) {
  if (!sink_) return;
  EventText e(sink_->buffer());
  append_complete(e, pid, tid, name, start_s, duration_s);
  append_args(e, args, &text);
  close_event(e);
}

void ChromeTraceWriter::async_begin(int pid, std::string_view category, int64_t id, std::string_view name,
                                    double time_s, std::initializer_list<TraceArg> args) {
  if (!sink_) return;
  EventText e(sink_->buffer());
  open_async(e, 'b', pid, category, id, name, time_s);
  append_args(e, args);
  close_event(e);
}

void ChromeTraceWriter::async_end(int pid, std::string_view category, int64_t id, std::string_view name,
                                  double time_s) {
  if (!sink_) return;
  EventText e(sink_->buffer());
  open_async(e, 'e', pid, category, id, name, time_s);
  close_event(e);
}

void ChromeTraceWriter::flow_begin(int pid, int tid, int64_t id, double time_s) {
  if (!sink_) return;
  append_flow('s', pid, tid, id, time_s);
}

void ChromeTraceWriter::flow_end(int pid, int tid, int64_t id, double time_s) {
  if (!sink_) return;
  append_flow('f', pid, tid, id, time_s);
}

// An async event's head: phase 'b' or 'e' on the process's track (tid 0, only for strict importers).
void ChromeTraceWriter::open_async(EventText& e, char phase, int pid, std::string_view category, int64_t id,
                                   std::string_view name, double time_s) {
  open_event(e, phase, pid, time_s);
  e.text(",\"tid\":0,\"cat\":");
  e.json_string(category);
  e.text(",\"id\":");
  e.integer(id);
  e.text(",\"name\":");
  e.json_string(name);
}

// A KV hand-off flow event, whole: 's' starts it, 'f' ends it bound to the enclosing slice ("bp":"e").
void ChromeTraceWriter::append_flow(char phase, int pid, int tid, int64_t id, double time_s) {
  EventText e(sink_->buffer());
  open_event(e, phase, pid, time_s);
  e.text(",\"tid\":");
  e.integer(tid);
  if (phase == 'f')
    e.text(",\"cat\":\"flow\",\"name\":\"kv_handoff\",\"bp\":\"e\",\"id\":");
  else
    e.text(",\"cat\":\"flow\",\"name\":\"kv_handoff\",\"id\":");
  e.integer(id);
  close_event(e);
}

void ChromeTraceWriter::counter(int pid, std::string_view name, double time_s,
                                std::initializer_list<TraceArg> series) {
  if (!sink_) return;
  EventText e(sink_->buffer());
  open_event(e, 'C', pid, time_s);
  e.text(",\"name\":");
  e.json_string(name);
  append_args(e, series);
  close_event(e);
}

bool ChromeTraceWriter::finish() {
  if (!sink_) return true;
  sink_->buffer().append("\n]}\n");
  return sink_->commit();
}

}  // namespace tokenline
