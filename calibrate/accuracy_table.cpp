#include "calibrate/accuracy_table.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "calibrate/embedded_accuracy.h"
#include "common/csv_fields.h"
#include "common/input_error.h"
#include "common/number_text.h"

namespace tokenline {
namespace {

constexpr std::string_view kHeader =
    "set,hardware,engine,pricing,profile,model,model_type,mode,points,ttft_pct,tpot_pct,e2e_pct";
constexpr size_t kColumns = 12;

double percent_field(const std::string& text, const std::string& where) {
  const std::optional<double> v = parse_finite_number(text);
  if (!v || *v < 0) throw InputError(where, "a percentage >= 0", "'" + text + "'");
  return *v;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string pct(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", v);
  return text;
}

// "4.8-9.7%" over the rows, or "4.8%" for one value.
std::string range(const std::vector<AccuracyRow>& rows, double AccuracyRow::*field) {
  double lo = rows.front().*field;
  double hi = lo;
  for (const AccuracyRow& r : rows) {
    lo = std::min(lo, r.*field);
    hi = std::max(hi, r.*field);
  }
  if (pct(lo) == pct(hi)) return pct(lo);
  char text[48];
  std::snprintf(text, sizeof text, "%.1f-%.1f%%", lo, hi);
  return text;
}

int points(const std::vector<AccuracyRow>& rows) {
  int n = 0;
  for (const AccuracyRow& r : rows) n += r.points;
  return n;
}

std::string count_of(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "114 published runs, 2 models, all in sample: TPOT 14.3-17.1%, TTFT 23.1-28.3% (MAPE per model)"
std::string span(const std::vector<AccuracyRow>& rows) {
  std::set<std::string> models;
  int held_out = 0;
  for (const AccuracyRow& r : rows) {
    models.insert(r.model);
    if (r.set == "held out") held_out += r.points;
  }
  const int n = points(rows);
  const std::string sets = held_out == 0   ? "all in sample"
                           : held_out == n ? "all held out"
                                           : std::to_string(held_out) + " held out";
  return count_of(n, "published run", "published runs") + ", " +
         count_of(static_cast<int>(models.size()), "model", "models") + ", " + sets + ": TPOT " +
         range(rows, &AccuracyRow::tpot_pct) + ", TTFT " + range(rows, &AccuracyRow::ttft_pct) +
         " (MAPE per model)";
}

// "Llama-3.1-70B on h200-vllm, 60 runs in sample: TPOT 9.1%, TTFT 8.0%"
std::string row_text(const AccuracyRow& r, bool with_profile) {
  return r.model + (r.mode == "disagg" ? " disaggregated" : "") +
         (with_profile ? " on " + r.hardware + " " + r.engine : std::string()) + ", " +
         count_of(r.points, "run", "runs") + (r.set == "held out" ? " held out" : " in sample") + ": TPOT " +
         pct(r.tpot_pct) + ", TTFT " + pct(r.ttft_pct);
}

bool same_model(const AccuracyRow& r, const AccuracyQuery& q) {
  const std::string name = lower(q.model_name);
  std::string model = lower(r.model);
  // the checkpoint's format and tuning, not the network: "Llama-3.1-8B-Instruct-FP8" is llama-3.1-8b
  for (bool cut = true; cut;) {
    cut = false;
    for (std::string_view suffix : {"-fp8", "-instruct"}) {
      if (!model.ends_with(suffix)) continue;
      model.resize(model.size() - suffix.size());
      cut = true;
    }
  }
  return !model.empty() && name.find(model) != std::string::npos;
}

// The family's rows among `rows`, the run's own model first, then the run's mode, then the most runs.
std::vector<AccuracyRow> family(const std::vector<AccuracyRow>& rows, const AccuracyQuery& q) {
  std::vector<AccuracyRow> f;
  for (const AccuracyRow& r : rows)
    if (!q.model_type.empty() && r.model_type == q.model_type) f.push_back(r);
  const std::string mode = q.disaggregated ? "disagg" : "agg";
  std::stable_sort(f.begin(), f.end(), [&](const AccuracyRow& a, const AccuracyRow& b) {
    const bool am = same_model(a, q);
    const bool bm = same_model(b, q);
    if (am != bm) return am;
    if ((a.mode == mode) != (b.mode == mode)) return a.mode == mode;
    return a.points > b.points;
  });
  if (f.size() > 3) f.resize(3);
  return f;
}

std::string family_line(const std::vector<AccuracyRow>& f, const AccuracyQuery& q, bool with_profile,
                        const std::string& where = "") {
  std::string line =
      (same_model(f.front(), q) ? "this model" : "this family (" + q.model_type + ")") + where + ": ";
  for (size_t i = 0; i < f.size(); ++i) line += (i ? "; " : "") + row_text(f[i], with_profile);
  return line;
}

}  // namespace

AccuracyTable parse_accuracy_table(std::string_view text, const std::string& file) {
  AccuracyTable table;
  bool header = false;
  int line_number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty()) continue;
    const std::string where = file + ":" + std::to_string(line_number);
    if (line.front() == '#') {
      if (table.provenance.empty()) table.provenance = std::string(line.substr(line.find_first_not_of("# ")));
      continue;
    }
    if (!header) {
      if (line != kHeader)
        throw InputError(where, "the header '" + std::string(kHeader) + "'", std::string(line));
      header = true;
      continue;
    }
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() != kColumns)
      throw InputError(where, std::to_string(kColumns) + " fields", std::to_string(f.size()));
    AccuracyRow r{.set = f[0],
                  .hardware = f[1],
                  .engine = f[2],
                  .pricing = f[3],
                  .profile = f[4],
                  .model = f[5],
                  .model_type = f[6],
                  .mode = f[7]};
    if (r.set != "fit set" && r.set != "held out")
      throw InputError(where + ": set", "'fit set' or 'held out'", "'" + r.set + "'");
    if (r.pricing != "own" && r.pricing != "transferred")
      throw InputError(where + ": pricing", "'own' or 'transferred'", "'" + r.pricing + "'");
    if (r.mode != "agg" && r.mode != "disagg")
      throw InputError(where + ": mode", "'agg' or 'disagg'", "'" + r.mode + "'");
    if (r.hardware.empty() || r.engine.empty() || r.profile.empty() || r.model.empty())
      throw InputError(where, "hardware, engine, profile and model", "an empty one");
    const std::optional<double> n = parse_finite_number(f[8]);
    if (!n || *n < 1 || *n != static_cast<int>(*n))
      throw InputError(where + ": points", "a whole number >= 1", "'" + f[8] + "'");
    r.points = static_cast<int>(*n);
    r.ttft_pct = percent_field(f[9], where + ": ttft_pct");
    r.tpot_pct = percent_field(f[10], where + ": tpot_pct");
    r.e2e_pct = percent_field(f[11], where + ": e2e_pct");
    table.rows.push_back(std::move(r));
  }
  if (!header) throw InputError(file, "the header '" + std::string(kHeader) + "'", "no header line");
  return table;
}

const AccuracyTable& shipped_accuracy_table() {
  static const AccuracyTable table =
      parse_accuracy_table(find_embedded(calibrate_embedded_files(), "accuracy.csv").value_or(""),
                           "calibrate/accuracy.csv (embedded)");
  return table;
}

AccuracyNote accuracy_note(const AccuracyTable& table, const AccuracyQuery& q) {
  AccuracyNote note;
  if (q.kind == "replay") return note;
  if (q.kind == "roofline") {
    note.lines.push_back("the roofline: no published run validates it here (docs/validation.md compares it)");
    return note;
  }
  if (q.kind == "ideal") {
    note.lines.push_back(
        "the seed's ideal rates: the seed article's reference figures, not a measured run's");
    return note;
  }
  const bool transferred = q.kind == "transferred";
  const std::string profile = q.profile.substr(q.profile.find(':') + 1);  // "transfer:P" -> P
  std::vector<AccuracyRow> own;
  std::vector<AccuracyRow> engine_own;  // the engine's own profiles on their GPUs
  std::vector<AccuracyRow> engine_moved;
  for (const AccuracyRow& r : table.rows) {
    if (r.engine != q.engine) continue;
    if (r.pricing == "own") engine_own.push_back(r);
    if (r.pricing == "transferred") engine_moved.push_back(r);
    const bool match = transferred
                           ? r.pricing == "transferred" && r.profile == profile && r.hardware == q.hardware
                           : r.pricing == "own" && r.profile == profile;
    if (match) own.push_back(r);
  }
  if (!own.empty()) {
    note.rows = own;
    note.lines.push_back((transferred ? profile + " transferred to " + q.hardware : profile) + " vs " +
                         span(own));
  } else if (transferred && !engine_moved.empty()) {
    note.rows = engine_moved;
    note.lines.push_back("no published " + q.hardware + " run checks this transfer; " + q.engine +
                         "'s profiles transferred to a GPU left out vs " + span(engine_moved));
  } else if (!engine_own.empty()) {
    note.rows = engine_own;
    note.lines.push_back("no published " + q.hardware + " " + q.engine + " run checks " + profile + "; " +
                         q.engine + "'s profiles on other GPUs vs " + span(engine_own));
  } else {
    note.lines.push_back("no published run checks " + q.engine + " on any GPU here");
    return note;
  }
  const bool one_profile = !own.empty();
  std::vector<AccuracyRow> f = family(note.rows, q);
  if (!f.empty()) {
    note.lines.push_back(family_line(f, q, !one_profile));
  } else {
    f = family(engine_own, q);
    if (!f.empty())
      note.lines.push_back(family_line(f, q, true, " on other GPUs"));
    else if (!q.model_type.empty())
      note.lines.push_back("no published " + q.engine + " run of the " + q.model_type + " family checked");
  }
  note.lines.back() += " (calibrate/accuracy.csv)";
  return note;
}

}  // namespace tokenline
