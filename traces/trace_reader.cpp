#include "traces/trace_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <istream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "traces/number_format.h"

namespace tokenline {
namespace {

constexpr double kNsPerUs = 1e3;
constexpr double kNsPerS = 1e9;
constexpr int kStreamsPerRank = 2;  // trace_tid: compute and comm threads per rank

using nlohmann::json;

// Any time a trace gives (an event's ts or dur, in microseconds): finite, >= 0 and inside the simulated
// horizon (limits::kMaxSimulatedS), so that no sum or rounding of them leaves int64 nanoseconds.
constexpr double kMaxTraceUs = limits::kMaxSimulatedS * 1e6;

// The bytes of a trace file, inflated when it is gzip (zlib's gzread passes plain files through), read
// in 64 KiB parts: the reader never holds the file, only one part of it.
class TraceFileBuf final : public std::streambuf {
 public:
  explicit TraceFileBuf(const std::string& path) : file_(gzopen(path.c_str(), "rb")) {
    if (file_ != nullptr) gzbuffer(file_, kZlibBufferBytes);
  }
  ~TraceFileBuf() override {
    if (file_ != nullptr) gzclose(file_);
  }
  TraceFileBuf(const TraceFileBuf&) = delete;
  TraceFileBuf& operator=(const TraceFileBuf&) = delete;
  bool opened() const { return file_ != nullptr; }
  // The gzip stream was cut or corrupt (reported once the parse has stopped).
  bool broken() const { return broken_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(file_, part_.data(), kPartBytes);
    int err = Z_OK;
    gzerror(file_, &err);
    if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) broken_ = true;
    if (n <= 0) return traits_type::eof();
    setg(part_.data(), part_.data(), part_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  static constexpr unsigned kPartBytes = 1u << 16;
  static constexpr unsigned kZlibBufferBytes = 1u << 20;  // zlib's own input buffer (default 8 KiB)
  gzFile file_;
  std::vector<char> part_ = std::vector<char>(kPartBytes);
  bool broken_ = false;
};

// SAX over a trace file: hands each element of the top-level "traceEvents" array to `on_event` as one
// small JSON value, and keeps nothing else, so memory holds one event at a time, not the document.
class EventStream final : public json::json_sax_t {
 public:
  using OnEvent = std::function<void(size_t index, const json& event)>;
  static constexpr const char* kTopLevel = "an object with a traceEvents array";
  explicit EventStream(OnEvent on_event) : on_event_(std::move(on_event)) {}

  bool saw_events() const { return saw_events_; }
  // Why the parse stopped: "expected ..., found ..." (empty when it did not).
  const std::string& error() const { return error_; }

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool string(string_t& v) override { return scalar(std::move(v)); }
  bool binary(binary_t&) override { return fail("JSON text", "a binary value"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key_ = k;
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return fail("a JSON document (Chrome Trace Event Format)",
                std::string("malformed JSON (") + e.what() + ")");
  }

 private:
  // Inside one element of traceEvents: depth 3 and deeper (1: the document, 2: the array).
  bool in_event() const { return in_events_ && depth_ >= 3; }

  bool scalar(json v) {
    if (depth_ == 0) return fail(kTopLevel, "something else");
    if (in_events_ && depth_ == 2) {  // a scalar element: not an event (the loop below skips it)
      on_event_(index_++, v);
      return true;
    }
    if (in_event()) place(std::move(v));
    return true;
  }
  bool open(json container) {
    ++depth_;
    if (depth_ > limits::kMaxJsonDepth)
      return fail("JSON nested at most " + std::to_string(limits::kMaxJsonDepth) + " levels deep", "deeper");
    if (depth_ == 1 && !container.is_object()) return fail(kTopLevel, "something else");
    if (depth_ == 2 && top_key_ == "traceEvents") {
      if (!container.is_array()) return fail(kTopLevel, "something else");
      in_events_ = saw_events_ = true;
      return true;
    }
    if (!in_event()) return true;
    if (depth_ == 3) {
      event_ = std::move(container);
      stack_.assign(1, &event_);
      return true;
    }
    stack_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    if (in_event()) {
      stack_.pop_back();
      if (depth_ == 3) on_event_(index_++, event_);
    } else if (in_events_ && depth_ == 2) {
      in_events_ = false;
    }
    --depth_;
    return true;
  }
  // Puts a value into the innermost open container of the event; returns where it went.
  json* place(json v) {
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }
  bool fail(const std::string& expected, const std::string& found) {
    if (error_.empty()) error_ = "expected " + expected + ", found " + found;
    return false;
  }

  OnEvent on_event_;
  int depth_ = 0;
  bool in_events_ = false, saw_events_ = false;
  std::string top_key_, key_;
  json event_;
  std::vector<json*> stack_;
  size_t index_ = 0;
  std::string error_;
};

// Streams the events of the trace at `path` to `on_event`; InputError naming the file when it is not a
// readable JSON object with a traceEvents array.
void stream_events(const std::string& path, const EventStream::OnEvent& on_event) {
  TraceFileBuf buf(path);
  if (!buf.opened()) throw InputError(path, "a readable trace.json", "no such file");
  std::istream in(&buf);
  EventStream sax(on_event);
  const bool ok = json::sax_parse(in, &sax);
  if (buf.broken()) throw InputError(path, "a whole gzip stream (trace.json.gz)", "corrupt or cut gzip data");
  if (!ok) throw InputError(path + ": " + sax.error());
  if (!sax.saw_events()) throw InputError(path, EventStream::kTopLevel, "something else");
}

double number(const json& e, const char* key, const std::string& where) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number())
    throw InputError(where, std::string("a numeric \"") + key + "\"", "none");
  return it->get<double>();
}

// An event's ts or dur: a time in microseconds in [0, kMaxTraceUs] (a negative or 1e308 span is not a
// measurement: it would compare as "measured -1.6 ms" or round to 0).
double time_us(const json& e, const char* key, const std::string& where) {
  const double us = number(e, key, where);
  if (!(us >= 0 && us <= kMaxTraceUs))
    throw InputError(where, std::string("\"") + key + "\" in [0, " + number_text(kMaxTraceUs) + "] us",
                     number_text(us));
  return us;
}

// pid and tid: small non-negative integers (a cast of 1e300 to int32_t is undefined; fuzz finding).
int32_t id_number(const json& e, const char* key, const std::string& where) {
  const double x = number(e, key, where);
  if (!(x >= 0 && x <= std::numeric_limits<int32_t>::max()))
    throw InputError(where, std::string("\"") + key + "\" in [0, 2^31)", std::to_string(x));
  return static_cast<int32_t>(x);
}

int64_t arg(const json& e, const char* key) {
  auto args = e.find("args");
  if (args == e.end() || !args->is_object()) return 0;
  auto it = args->find(key);
  return it != args->end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// Reads the decimal digits at text[*pos] (at least one, at most 18: no overflow) into *value.
bool parse_count(std::string_view text, size_t* pos, int64_t* value) {
  constexpr size_t kMaxDigits = 18;  // 10^18 - 1 < INT64_MAX
  const size_t begin = *pos;
  int64_t v = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9' && *pos - begin < kMaxDigits)
    v = v * 10 + (text[(*pos)++] - '0');
  *value = v;
  return *pos > begin;
}

bool parse_entry(std::string_view text, RecordedEntry* e) {
  size_t pos = 0;
  if (!parse_count(text, &pos, &e->id) || pos >= text.size()) return false;
  const char kind = text[pos++];
  if (kind != 'p' && kind != 'd') return false;
  e->prefill = kind == 'p';
  if (!parse_count(text, &pos, &e->new_tokens)) return false;
  e->context_tokens = 0;
  e->accepted = -1;
  if (e->prefill) {
    if (pos >= text.size() || text[pos++] != '@' || !parse_count(text, &pos, &e->context_tokens))
      return false;
  } else if (pos < text.size() && text[pos] == '+') {
    int64_t accepted = 0;
    ++pos;
    if (!parse_count(text, &pos, &accepted) || accepted >= e->new_tokens) return false;
    e->accepted = static_cast<int32_t>(accepted);
  }
  return pos == text.size();
}

// The rank's "batch" arg, when the span has one; InputError when it breaks the grammar or disagrees with
// the span's request and token counts.
void read_batch(const json& e, const std::string& where, RecordedRankStep* rank) {
  auto args = e.find("args");
  if (args == e.end() || !args->is_object()) return;
  auto it = args->find("batch");
  if (it == args->end()) return;
  const char* expected = "a \"batch\" string of entries <id>p<new>@<context> or <id>d<new>[+<accepted>]";
  if (!it->is_string()) throw InputError(where, expected, it->dump());
  const std::string text = it->get<std::string>();
  if (!parse_batch(text, &rank->batch)) throw InputError(where, expected, "'" + text + "'");
  int64_t tokens = 0;
  for (const RecordedEntry& entry : rank->batch) tokens += entry.new_tokens;
  if (static_cast<int64_t>(rank->batch.size()) != rank->requests || tokens != rank->tokens)
    throw InputError(
        where,
        "a \"batch\" of " + std::to_string(rank->requests) + " entries and " + std::to_string(rank->tokens) +
            " tokens (the span's requests and tokens)",
        std::to_string(rank->batch.size()) + " entries and " + std::to_string(tokens) + " tokens");
  rank->has_batch = true;
}

}  // namespace

void append_batch_entry(std::string& out, const RecordedEntry& entry) {
  if (!out.empty()) out.push_back(' ');
  append_int(out, entry.id);
  out.push_back(entry.prefill ? 'p' : 'd');
  append_int(out, entry.new_tokens);
  if (entry.prefill) {
    out.push_back('@');
    append_int(out, entry.context_tokens);
  } else if (entry.accepted >= 0) {
    out.push_back('+');
    append_int(out, entry.accepted);
  }
}

bool parse_batch(std::string_view text, std::vector<RecordedEntry>* out) {
  out->clear();
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = std::min(text.find(' ', begin), text.size());
    RecordedEntry entry;
    if (!parse_entry(text.substr(begin, end - begin), &entry)) return false;
    out->push_back(entry);
    begin = end + 1;
    if (begin == text.size()) return false;  // a trailing space
  }
  return true;
}

std::string to_string(const RecordedEntry& entry) {
  std::string out;
  append_batch_entry(out, entry);
  return out;
}

double trace_us_to_s(double us) {
  return static_cast<double>(std::llround(us * kNsPerUs)) / kNsPerS;
}

std::string inflate_gzip(const std::string& bytes, const std::string& path, size_t max_in_bytes) {
  constexpr int kGzipOnlyWindowBits = 15 + 16;  // 32 KiB window, gzip wrapper only
  constexpr size_t kZlibMaxIn = std::numeric_limits<uInt>::max();
  const size_t part = max_in_bytes == 0 ? kZlibMaxIn : std::min(max_in_bytes, kZlibMaxIn);
  z_stream zs{};
  if (inflateInit2(&zs, kGzipOnlyWindowBits) != Z_OK) throw InputError(path, "zlib to start", "no memory");
  std::string text;
  std::string chunk(size_t{1} << 20, '\0');
  size_t fed = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (zs.avail_in == 0 && fed < bytes.size()) {  // the next part of the input
      const size_t n = std::min(part, bytes.size() - fed);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + fed));
      zs.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    text.append(chunk.data(), chunk.size() - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    throw InputError(path, "a whole gzip stream (trace.json.gz)", "corrupt or cut gzip data");
  return text;
}

// Reads one event into `by_pid`. Function-try-block below: a value of the wrong type (value("ph", "") on
// a number throws type_error) is bad input, not an escaped exception (fuzz finding).
void read_event(const json& e, const std::string& where, std::map<int32_t, RecordedInstance>& by_pid) {
  if (!e.is_object() || e.value("ph", "") != "X") return;
  const std::string name = e.value("name", "");
  const int32_t pid = id_number(e, "pid", where);
  const int32_t tid = id_number(e, "tid", where);
  const double ts_us = time_us(e, "ts", where);
  const double start_s = trace_us_to_s(ts_us);
  const double duration_s = trace_us_to_s(time_us(e, "dur", where));
  RecordedInstance& inst = by_pid[pid];
  inst.pid = pid;
  const int32_t rank = tid / kStreamsPerRank;
  if (name == "step") {
    const int64_t step = arg(e, "step");
    if (inst.steps.empty() || inst.steps.back().step != step) {
      RecordedStep s;
      s.step = step;
      s.start_s = start_s;
      s.duration_s = duration_s;
      inst.steps.push_back(std::move(s));
    }
    RecordedRankStep rank_step;
    rank_step.rank = rank;
    rank_step.tokens = arg(e, "tokens");
    rank_step.requests = arg(e, "requests");
    read_batch(e, where, &rank_step);
    inst.steps.back().ranks.push_back(std::move(rank_step));
    return;
  }
  if (inst.steps.empty()) throw InputError(where, "op spans after their step span", "'" + name + "' first");
  RecordedStep& s = inst.steps.back();
  if (name == "kv_load_host" || name == "kv_store_host") {  // run/recorder.cpp's host-tier spans
    (name == "kv_load_host" ? s.tier_load_s : s.tier_store_s) = duration_s;
    s.tier_stall_s += static_cast<double>(arg(e, "stall_ns")) * 1e-9;
    return;
  }
  s.ops.push_back(RecordedOp{.name = name,
                             .rank = rank,
                             .comm = tid % kStreamsPerRank == 1,
                             .start_s = trace_us_to_s((ts_us - s.start_s * 1e6)),
                             .duration_s = duration_s});
}

RecordedRun read_recorded_run(const std::string& path) try {
  std::map<int32_t, RecordedInstance> by_pid;
  stream_events(path, [&](size_t i, const json& e) {
    read_event(e, path + ": traceEvents[" + std::to_string(i) + "]", by_pid);
  });
  RecordedRun run;
  for (auto& [pid, inst] : by_pid) {
    if (pid != static_cast<int32_t>(run.instances.size()) + 1)
      throw InputError(path, "instances with pids 1, 2, ... (as tokenline writes them)",
                       "pid " + std::to_string(pid));
    run.instances.push_back(std::move(inst));
  }
  if (run.instances.empty())
    throw InputError(path, "step spans (a trace written by tokenline sim or run)", "none");
  return run;
} catch (const json::exception& e) {
  throw InputError(path, "a tokenline trace.json", std::string("a malformed value (") + e.what() + ")");
}

}  // namespace tokenline
