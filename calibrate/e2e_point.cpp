#include "calibrate/e2e_point.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "common/csv_fields.h"
#include "common/input_error.h"

namespace tokenline {
namespace {

// One data row with its header: typed access to named fields, messages naming file:line: column.
class Row {
 public:
  Row(const std::map<std::string, size_t>& columns, std::vector<std::string> fields, std::string where)
      : columns_(columns), fields_(std::move(fields)), where_(std::move(where)) {}

  const std::string& text(const std::string& column) const {
    auto it = columns_.find(column);
    if (it == columns_.end()) throw InputError(where_ + ": " + column, "a column '" + column + "'", "none");
    return fields_[it->second];
  }
  std::string text_or_empty(const std::string& column) const {
    return columns_.count(column) > 0 ? text(column) : std::string();
  }
  // At most kMaxCount: every count (sizes, workers, clients, lengths) is kept in an int32_t.
  int64_t count(const std::string& column, int64_t least = 1) const {
    const std::string& t = text(column);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || v < least) {
      throw InputError(where_ + ": " + column, least == 1 ? "a positive integer" : "an integer >= 0",
                       quoted(t));
    }
    if (v > kMaxCount)
      throw InputError(where_ + ": " + column, "an integer at most " + std::to_string(kMaxCount), quoted(t));
    return v;
  }
  // An empty cell means `fallback` (the CSV leaves attention_dp_size and num_workers empty for 1), as does 0
  // where `zero_is_unset` (a column that writes "not set" so: the MoE sizes of a dense model).
  int32_t count_or(const std::string& column, int32_t fallback, bool zero_is_unset = false) const {
    if (text_or_empty(column).empty()) return fallback;
    const int64_t v = count(column, zero_is_unset ? 0 : 1);
    return zero_is_unset && v == 0 ? fallback : static_cast<int32_t>(v);
  }
  // An empty cell or no column: nullopt.
  std::optional<int32_t> optional_count(const std::string& column, int64_t least) const {
    if (text_or_empty(column).empty()) return std::nullopt;
    return static_cast<int32_t>(count(column, least));
  }
  // A measured latency: finite, > 0 and at most a day (no benchmark row runs longer; "inf" or 1e308 would
  // make every error against it 100% or NaN).
  double latency_ms(const std::string& column) const {
    return number(column, "a number of milliseconds in (0, 8.64e7]",
                  [](double v) { return v > 0 && v <= kMaxLatencyMs; });
  }
  // An empty cell or no column: fallback; else a number in (0, 1].
  double fraction_or(const std::string& column, double fallback) const {
    if (text_or_empty(column).empty()) return fallback;
    return number(column, "a number in (0, 1]", [](double v) { return v > 0 && v <= 1; });
  }
  const std::string& where() const { return where_; }

 private:
  static std::string quoted(const std::string& t) { return t.empty() ? "an empty cell" : "'" + t + "'"; }
  template <typename Valid>
  double number(const std::string& column, const char* expected, Valid valid) const {
    const std::string& t = text(column);
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || !valid(v))
      throw InputError(where_ + ": " + column, expected, quoted(t));
    return v;
  }

  static constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();
  static constexpr double kMaxLatencyMs = 8.64e7;  // a day

  const std::map<std::string, size_t>& columns_;
  std::vector<std::string> fields_;
  std::string where_;
};

E2eLayout read_layout(const Row& row, const std::string& prefix, bool has_workers) {
  E2eLayout l;
  l.tp = static_cast<int32_t>(row.count(prefix + "tp_size"));
  // aiconfigurator writes 0 for "not used" in a dense model's attention-DP and MoE columns
  // (silicon_sample.csv's GB200 TensorRT-LLM and H100 Qwen3-32B rows): read as an empty cell, 1.
  l.attention_dp = row.count_or(prefix + "attention_dp_size", 1, true);
  l.moe_tp = row.count_or(prefix + "moe_tp_size", 1, true);
  l.moe_ep = row.count_or(prefix + "moe_ep_size", 1, true);
  l.workers = has_workers ? row.count_or(prefix + "num_workers", 1) : 1;
  l.workers_recorded = !has_workers || !row.text_or_empty(prefix + "num_workers").empty();
  return l;
}

E2eMode read_mode(const Row& row) {
  const std::string& m = row.text("mode");
  if (m == "agg") return E2eMode::kAggregated;
  if (m == "disagg") return E2eMode::kDisaggregated;
  throw InputError(row.where() + ": mode", "agg or disagg", "'" + m + "'");
}

// Options a row's sim_args may not name: its other columns (and calibrate's own options) set them.
constexpr std::string_view kSetByTheRow[] = {
    "--model",       "--hardware", "--cluster", "--parallel", "--instances", "--pd",          "--workload",
    "--concurrency", "--warmup",   "--seed",    "--out",      "--profile",   "--max-requests"};

std::vector<std::string> read_sim_args(const Row& row) {
  std::vector<std::string> words;
  std::istringstream in(row.text_or_empty("sim_args"));
  for (std::string w; in >> w;) words.push_back(w);
  const std::string where = row.where() + ": sim_args";
  if (!words.empty() && words.front().rfind("--", 0) != 0)
    throw InputError(where, "`tokenline sim` options starting with --", "'" + words.front() + "'");
  for (const std::string& w : words) {
    if (w.find_first_of("\"'") != std::string::npos)
      throw InputError(where, "words split at spaces, unquoted", "'" + w + "'");
    const std::string_view name = std::string_view(w).substr(0, w.find('='));
    for (std::string_view reserved : kSetByTheRow) {
      if (name == reserved)
        throw InputError(where, "engine flags (the row's other columns set " + std::string(reserved) + ")",
                         "'" + w + "'");
    }
  }
  return words;
}

E2ePoint read_point(const Row& row, int64_t line) {
  E2ePoint p;
  p.line = line;
  p.model_path = row.text("model_path");
  if (p.model_path.empty()) throw InputError(row.where() + ": model_path", "an org/name", "an empty cell");
  p.backend = row.text_or_empty("backend");
  p.backend_version = row.text_or_empty("backend_version");
  p.precision = row.text_or_empty("precision");
  p.gemm_quant_mode = row.text_or_empty("gemm_quant_mode");
  p.mode = read_mode(row);
  p.concurrency = static_cast<int32_t>(row.count("concurrency"));
  p.isl = row.count("isl");
  p.osl = row.count("osl");
  if (p.mode == E2eMode::kAggregated) {
    p.agg = read_layout(row, "", false);
  } else {
    p.prefill = read_layout(row, "prefill_", true);
    p.decode = read_layout(row, "decode_", true);
  }
  p.ttft_ms = row.latency_ms("silicon_ttft_ms");
  p.tpot_ms = row.latency_ms("silicon_tpot_ms");
  p.sim_args = read_sim_args(row);
  p.warmup_per_client = row.optional_count("warmup_per_client", 0);
  p.requests_per_client = row.optional_count("requests_per_client", 1);
  p.length_range_ratio = row.fraction_or("length_range_ratio", 1);
  const bool protocol_given = !row.text_or_empty("warmup_per_client").empty() ||
                              !row.text_or_empty("requests_per_client").empty() ||
                              !row.text_or_empty("length_range_ratio").empty();
  if (!protocol_given) {
    if (const auto c = inferencex_protocol(row.text_or_empty("silicon_data_source"))) {
      p.warmup_per_client = c->warmup_per_client;
      p.requests_per_client = c->requests_per_client;
      p.length_range_ratio = c->length_range_ratio;
      p.client_from_source = true;
    }
  }
  return p;
}

}  // namespace

std::optional<ClientProtocol> inferencex_protocol(std::string_view silicon_data_source) {
  // "key=value" parts split at ';' (the first part of a database dump is "db-dump/<date>", no '=').
  std::string_view source_file, measured;
  bool database = false;
  for (size_t begin = 0; begin < silicon_data_source.size();) {
    size_t end = silicon_data_source.find(';', begin);
    if (end == std::string_view::npos) end = silicon_data_source.size();
    std::string_view part = silicon_data_source.substr(begin, end - begin);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.starts_with("db-dump/")) database = true;
    if (part.starts_with("source_file=")) source_file = part.substr(12);
    if (part.starts_with("measured=")) measured = part.substr(9);
    begin = end + 1;
  }
  // An export's file is named by its date alone ("2026-03-25.csv"); aiconfigurator's own sweeps name a path.
  const bool exported = source_file.size() == 14 && source_file.ends_with(".csv") &&
                        source_file.find('/') == std::string_view::npos && source_file[4] == '-' &&
                        source_file[7] == '-';
  if ((!database && !exported) || measured.size() < 10) return std::nullopt;
  // ISO times compare as text; a date alone ("2026-01-21") sorts before that day's times.
  constexpr std::string_view kWarmupFrom = "2026-01-21T17:53:38Z";
  return ClientProtocol{.warmup_per_client = measured >= kWarmupFrom ? 2 : 0,
                        .requests_per_client = 10,
                        .length_range_ratio = 0.8};
}

int64_t shortest_length(int64_t tokens, double range_ratio) {
  const auto low = static_cast<int64_t>(static_cast<double>(tokens) * range_ratio);
  return std::clamp<int64_t>(low, 1, tokens);
}

double mean_length(int64_t tokens, double range_ratio) {
  return 0.5 * static_cast<double>(shortest_length(tokens, range_ratio) + tokens);
}

bool deployment_recorded(const E2ePoint& point) {
  return point.mode == E2eMode::kAggregated ||
         (point.prefill.workers_recorded && point.decode.workers_recorded);
}

SetApart set_apart(const E2ePoint& point) {
  if (!deployment_recorded(point)) return SetApart::kDeploymentUnrecorded;
  return point.prefill_overloaded ? SetApart::kPrefillOverloaded : SetApart::kNo;
}

std::string_view to_string(E2eMode mode) {
  switch (mode) {
    case E2eMode::kAggregated:
      return "agg";
    case E2eMode::kDisaggregated:
      return "disagg";
  }
  return "?";
}

std::vector<E2ePoint> parse_e2e_points(std::string_view text, const std::string& path) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ":1", "a header row of column names", "an empty file");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::map<std::string, size_t> columns;
  const std::vector<std::string> names = csv_fields(line);
  for (size_t i = 0; i < names.size(); ++i) columns[names[i]] = i;
  std::vector<E2ePoint> points;
  for (int64_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    std::vector<std::string> fields = csv_fields(line);
    if (fields.size() != names.size()) {
      throw InputError(where, std::to_string(names.size()) + " comma-separated fields (as the header)",
                       std::to_string(fields.size()));
    }
    points.push_back(read_point(Row(columns, std::move(fields), where), number));
  }
  if (points.empty()) throw InputError(path, "at least one data row", "none");
  return points;
}

std::vector<E2ePoint> read_e2e_points(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "a readable e2e CSV file", "a file that cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  return parse_e2e_points(text.str(), path);
}

}  // namespace tokenline
