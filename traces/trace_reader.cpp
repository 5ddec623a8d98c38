#include "traces/trace_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/input_error.h"
#include "traces/number_format.h"

namespace tokenline {
namespace {

constexpr double kNsPerUs = 1e3;
constexpr double kNsPerS = 1e9;
constexpr int kStreamsPerRank = 2;  // trace_tid: compute and comm threads per rank

using nlohmann::json;

// A gzip file (--trace-gzip) starts with these two bytes (RFC 1952).
bool gzipped(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "a readable trace.json", "no such file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (gzipped(text)) text = inflate_gzip(text, path);
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    throw InputError(path, "a JSON document (Chrome Trace Event Format)", "malformed JSON");
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw InputError(path, "an object with a traceEvents array", "something else");
  return doc;
}

double number(const json& e, const char* key, const std::string& where) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number())
    throw InputError(where, std::string("a numeric \"") + key + "\"", "none");
  return it->get<double>();
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

// A function-try-block: a value of the wrong type (value("ph", "") on a number throws type_error) is bad
// input, not an escaped exception (fuzz finding).
RecordedRun read_recorded_run(const std::string& path) try {
  const json doc = parse_file(path);
  std::map<int32_t, RecordedInstance> by_pid;
  const json& events = doc["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string where = path + ": traceEvents[" + std::to_string(i) + "]";
    const std::string name = e.value("name", "");
    const int32_t pid = id_number(e, "pid", where);
    const int32_t tid = id_number(e, "tid", where);
    const double start_s = trace_us_to_s(number(e, "ts", where));
    const double duration_s = trace_us_to_s(number(e, "dur", where));
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
      continue;
    }
    if (inst.steps.empty()) throw InputError(where, "op spans after their step span", "'" + name + "' first");
    RecordedStep& s = inst.steps.back();
    s.ops.push_back(RecordedOp{.name = name,
                               .rank = rank,
                               .comm = tid % kStreamsPerRank == 1,
                               .start_s = trace_us_to_s((number(e, "ts", where) - s.start_s * 1e6)),
                               .duration_s = duration_s});
  }
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
