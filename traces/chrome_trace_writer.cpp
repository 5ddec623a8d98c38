#include "traces/chrome_trace_writer.h"

#include "traces/number_format.h"

namespace tokenline {
namespace {

constexpr double kMicrosecondsPerSecond = 1e6;
constexpr int kTimeDecimals = 3;  // nanosecond resolution in microsecond units

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(const std::string& path, TraceEncoding encoding)
    : sink_(std::make_unique<TraceSink>(path, encoding)) {
  sink_->buffer().append("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
}

void ChromeTraceWriter::open_event(char phase, int pid, double time_s) {
  std::string& out = sink_->buffer();
  out.append(events_ == 0 ? "{\"ph\":\"" : ",\n{\"ph\":\"");
  out.push_back(phase);
  out.append("\",\"pid\":");
  append_int(out, pid);
  out.append(",\"ts\":");
  append_fixed(out, time_s * kMicrosecondsPerSecond, kTimeDecimals);
  ++events_;
}

void ChromeTraceWriter::append_args(std::initializer_list<TraceArg> args, const TraceText* text) {
  if (args.size() == 0 && text == nullptr) return;
  std::string& out = sink_->buffer();
  out.append(",\"args\":{");
  bool first = true;
  for (const TraceArg& arg : args) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, arg.key);
    out.push_back(':');
    append_int(out, arg.value);
  }
  if (text != nullptr) {
    if (!first) out.push_back(',');
    append_json_string(out, text->key);
    out.push_back(':');
    append_json_string(out, text->value);
  }
  out.push_back('}');
}

void ChromeTraceWriter::close_event() {
  sink_->buffer().push_back('}');
  sink_->maybe_flush();
}

void ChromeTraceWriter::process_name(int pid, std::string_view name) {
  if (!sink_) return;
  open_event('M', pid, 0);
  std::string& out = sink_->buffer();
  out.append(",\"name\":\"process_name\",\"args\":{\"name\":");
  append_json_string(out, name);
  out.push_back('}');
  close_event();
}

void ChromeTraceWriter::thread_name(int pid, int tid, std::string_view name) {
  if (!sink_) return;
  open_event('M', pid, 0);
  std::string& out = sink_->buffer();
  out.append(",\"tid\":");
  append_int(out, tid);
  out.append(",\"name\":\"thread_name\",\"args\":{\"name\":");
  append_json_string(out, name);
  out.push_back('}');
  close_event();
}

void ChromeTraceWriter::append_complete(int pid, int tid, std::string_view name, double start_s,
                                        double duration_s) {
  open_event('X', pid, start_s);
  std::string& out = sink_->buffer();
  out.append(",\"dur\":");
  append_fixed(out, duration_s * kMicrosecondsPerSecond, kTimeDecimals);
  out.append(",\"tid\":");
  append_int(out, tid);
  out.append(",\"name\":");
  append_json_string(out, name);
}

void ChromeTraceWriter::complete(int pid, int tid, std::string_view name, double start_s, double duration_s,
                                 std::initializer_list<TraceArg> args) {
  if (!sink_) return;
  append_complete(pid, tid, name, start_s, duration_s);
  append_args(args);
  close_event();
}

void ChromeTraceWriter::complete(int pid, int tid, std::string_view name, double start_s, double duration_s,
                                 std::initializer_list<TraceArg> args, TraceText text) {
  if (!sink_) return;
  append_complete(pid, tid, name, start_s, duration_s);
  append_args(args, &text);
  close_event();
}

void ChromeTraceWriter::async_begin(int pid, std::string_view category, int64_t id, std::string_view name,
                                    double time_s, std::initializer_list<TraceArg> args) {
  if (!sink_) return;
  open_async('b', pid, category, id, name, time_s);
  append_args(args);
  close_event();
}

void ChromeTraceWriter::async_end(int pid, std::string_view category, int64_t id, std::string_view name,
                                  double time_s) {
  if (!sink_) return;
  open_async('e', pid, category, id, name, time_s);
  close_event();
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
void ChromeTraceWriter::open_async(char phase, int pid, std::string_view category, int64_t id,
                                   std::string_view name, double time_s) {
  open_event(phase, pid, time_s);
  std::string& out = sink_->buffer();
  out.append(",\"tid\":0,\"cat\":");
  append_json_string(out, category);
  out.append(",\"id\":");
  append_int(out, id);
  out.append(",\"name\":");
  append_json_string(out, name);
}

// A KV hand-off flow event, whole: 's' starts it, 'f' ends it bound to the enclosing slice ("bp":"e").
void ChromeTraceWriter::append_flow(char phase, int pid, int tid, int64_t id, double time_s) {
  open_event(phase, pid, time_s);
  std::string& out = sink_->buffer();
  out.append(",\"tid\":");
  append_int(out, tid);
  out.append(phase == 'f' ? ",\"cat\":\"flow\",\"name\":\"kv_handoff\",\"bp\":\"e\",\"id\":"
                          : ",\"cat\":\"flow\",\"name\":\"kv_handoff\",\"id\":");
  append_int(out, id);
  close_event();
}

void ChromeTraceWriter::counter(int pid, std::string_view name, double time_s,
                                std::initializer_list<TraceArg> series) {
  if (!sink_) return;
  open_event('C', pid, time_s);
  std::string& out = sink_->buffer();
  out.append(",\"name\":");
  append_json_string(out, name);
  append_args(series);
  close_event();
}

bool ChromeTraceWriter::finish() {
  if (!sink_) return true;
  sink_->buffer().append("\n]}\n");
  return sink_->commit();
}

}  // namespace tokenline
