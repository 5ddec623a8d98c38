#include "traces/request_compare.h"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "traces/latency_summary.h"

namespace tokenline {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// std::getline, but a line longer than limits::kMaxLineBytes (a file without newlines, /dev/zero) is
// refused instead of read until memory runs out.
bool next_line(std::istream& in, std::string& line, const std::string& where) {
  line.clear();
  std::streambuf& buf = *in.rdbuf();
  for (int c = buf.sbumpc(); c != std::char_traits<char>::eof(); c = buf.sbumpc()) {
    if (c == '\n') return true;
    line.push_back(static_cast<char>(c));
    if (static_cast<int64_t>(line.size()) > limits::kMaxLineBytes)
      throw InputError(where, "lines of at most " + std::to_string(limits::kMaxLineBytes >> 20) + " MiB",
                       "a longer line");
  }
  return !line.empty();
}

// A time column: seconds in [0, limits::kMaxSimulatedS] (finite: "nan", "inf" and 1e308 are refused);
// `none_ok`: -1 too (first_token_s of a request that never got one, as older files wrote it).
double seconds(const std::string& text, const std::string& where, const char* column, bool none_ok = false) {
  size_t used = 0;
  const double v = std::stod(text, &used);  // std::invalid_argument / out_of_range: the caller's message
  if (none_ok && used == text.size() && v == -1) return -1;
  if (used != text.size() || !(v >= 0 && v <= limits::kMaxSimulatedS))
    throw InputError(where + ": " + column, "seconds in [0, " + number_text(limits::kMaxSimulatedS) + "]",
                     "'" + text + "'");
  return v;
}

// Accumulates one latency over the joined, completed requests.
struct LatencyRow {
  LatencyComparison out;
  std::vector<double> errors;
  void add(double predicted_s, double measured_s) {
    ++out.requests;
    out.predicted_mean_s += predicted_s;
    out.measured_mean_s += measured_s;
    if (measured_s > 0) errors.push_back(std::abs(predicted_s - measured_s) / measured_s);
  }
  LatencyComparison finish() {
    if (out.requests > 0) {
      out.predicted_mean_s /= static_cast<double>(out.requests);
      out.measured_mean_s /= static_cast<double>(out.requests);
    }
    const LatencySummary s = summarize(errors);
    out.error = RelativeError{.samples = s.count, .mean = s.mean, .p50 = s.p50, .p90 = s.p90};
    return out;
  }
};

}  // namespace

std::vector<RecordedRequest> read_requests_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "a readable requests.csv", "no such file");
  std::string line;
  if (!next_line(in, line, path + ":1"))
    throw InputError(path + ":1", "the requests.csv header", "an empty file");
  const std::vector<std::string> header = split_csv(line);
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  const char* needed[] = {"id",           "arrival_s",     "first_token_s", "finish_s",
                          "input_tokens", "output_tokens", "cached_tokens", "preemptions",
                          "status"};
  for (const char* name : needed) {
    if (column.count(name) == 0)
      throw InputError(path + ":1", std::string("a column ") + name, "'" + line + "'");
  }
  std::vector<RecordedRequest> rows;
  for (int64_t number = 2; next_line(in, line, path + ":" + std::to_string(number)); ++number) {
    const std::vector<std::string> f = split_csv(line);
    const std::string where = path + ":" + std::to_string(number);
    if (f.size() != header.size())
      throw InputError(where, std::to_string(header.size()) + " fields", std::to_string(f.size()));
    try {
      RecordedRequest r;
      r.id = std::stoll(f[column["id"]]);
      r.arrival_s = seconds(f[column["arrival_s"]], where, "arrival_s");
      const std::string& first = f[column["first_token_s"]];
      r.first_token_s = first.empty() ? -1 : seconds(first, where, "first_token_s", true);
      r.finish_s = seconds(f[column["finish_s"]], where, "finish_s");
      r.input_tokens = std::stoll(f[column["input_tokens"]]);
      r.generated_tokens = std::stoll(f[column["output_tokens"]]);
      r.cached_tokens = std::stoll(f[column["cached_tokens"]]);
      r.preemptions = std::stoll(f[column["preemptions"]]);
      r.status = f[column["status"]];
      rows.push_back(std::move(r));
    } catch (const std::logic_error&) {
      throw InputError(where, "numbers in the numeric columns", "'" + line + "'");
    }
  }
  return rows;
}

RequestComparison compare_requests(const std::vector<RecordedRequest>& predicted,
                                   const std::vector<RecordedRequest>& measured) {
  std::map<int64_t, const RecordedRequest*> by_id;
  for (const RecordedRequest& r : predicted) by_id.emplace(r.id, &r);
  RequestComparison c;
  LatencyRow ttft, e2e;
  ttft.out.name = "ttft";
  e2e.out.name = "e2e";
  for (const RecordedRequest& m : measured) {
    auto it = by_id.find(m.id);
    if (it == by_id.end()) {
      ++c.measured_only;
      continue;
    }
    const RecordedRequest& p = *it->second;
    by_id.erase(it);
    ++c.joined;
    c.status_differs += p.status != m.status ? 1 : 0;
    c.cached_differs += p.cached_tokens != m.cached_tokens ? 1 : 0;
    c.preemptions_differ += p.preemptions != m.preemptions ? 1 : 0;
    if (p.status != "completed" || m.status != "completed") continue;
    ++c.completed_both;
    ttft.add(p.first_token_s - p.arrival_s, m.first_token_s - m.arrival_s);
    e2e.add(p.finish_s - p.arrival_s, m.finish_s - m.arrival_s);
  }
  c.predicted_only = static_cast<int64_t>(by_id.size());
  c.ttft = ttft.finish();
  c.e2e = e2e.finish();
  return c;
}

}  // namespace tokenline
