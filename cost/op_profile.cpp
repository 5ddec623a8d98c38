// load_op_profile: profile.json + its CSV tables, from the embedded copies or a directory, into OpProfile.
#include "cost/op_profile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "common/input_error.h"
#include "cost/engine_behavior_json.h"
#include "cost/step_cost.h"
#include "topologies/embedded_specs.h"

namespace tokenline {
namespace {

using Json = nlohmann::json;
constexpr const char* kOpScalesKey = "op_scales";  // timing.op_scales: per-op scales, not a TimingParam

struct TableSpec {
  const char* header;  // the exact header line
  int text_columns;
};

TableSpec table_spec(ProfileTableKind kind) {
  switch (kind) {
    case ProfileTableKind::kGemm:
      return {"dtype,m,n,k,latency_ms", 1};
    case ProfileTableKind::kMoe:
      return {"dtype,routing,tokens,hidden,inter,topk,experts,moe_tp,moe_ep,latency_ms", 2};
    case ProfileTableKind::kMlaBmm:
      return {"op,dtype,tokens,heads,latency_ms", 2};
    case ProfileTableKind::kMlaDecode:
    case ProfileTableKind::kMlaPrefill:
      return {"kv_dtype,heads,batch,tokens,latency_ms", 1};
    case ProfileTableKind::kGqaDecode:
    case ProfileTableKind::kGqaPrefill:
      return {"kv_dtype,heads,kv_heads,head_dim,batch,tokens,latency_ms", 1};
    case ProfileTableKind::kComm:
      return {"op,gpus,bytes,latency_ms", 1};
    case ProfileTableKind::kMlaModuleDecode:
      return {"kv_dtype,hidden,q_lora,heads,batch,tokens,latency_ms", 1};
    case ProfileTableKind::kDsa:
      return {"module,phase,hidden,heads,batch,tokens,latency_ms", 2};
    case ProfileTableKind::kOps:
      return {"op,phase,batch,tokens,latency_ms", 2};
    case ProfileTableKind::kCount:
      break;
  }
  return {"", 0};
}

// Where the files of one profile come from: the embedded copies or a directory on disk.
struct ProfileSource {
  std::string embedded_prefix;  // "profiles/<name>/" when embedded
  std::filesystem::path dir;    // otherwise
  std::string label;            // what messages name

  std::optional<std::string> read(const std::string& file) const {
    if (!embedded_prefix.empty()) {
      auto text = find_embedded(topologies_embedded_specs(), embedded_prefix + file);
      return text ? std::optional<std::string>(std::string(*text)) : std::nullopt;
    }
    std::ifstream in(dir / file, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string where(const std::string& file) const { return label + "/" + file; }
};

// `field` names the option or profile.json key that gave name_or_dir (messages name it).
ProfileSource resolve_source(const std::string& name_or_dir, const std::string& field) {
  namespace fs = std::filesystem;
  const bool looks_like_path = name_or_dir.find('/') != std::string::npos || name_or_dir.rfind('.', 0) == 0;
  if (!looks_like_path) {
    for (const std::string& n : embedded_profile_names()) {
      if (n == name_or_dir) return {"profiles/" + n + "/", {}, "topologies/profiles/" + n + " (embedded)"};
    }
  }
  std::error_code ec;
  if (fs::is_directory(name_or_dir, ec)) return {"", fs::path(name_or_dir), name_or_dir};
  std::string names;
  for (const std::string& n : embedded_profile_names()) names += (names.empty() ? "" : ", ") + n;
  throw InputError(field, "one of " + names + " or a directory holding profile.json",
                   "'" + name_or_dir + "'");
}

double parse_number(std::string_view cell, const std::string& where, std::string_view column) {
  double v = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || end != cell.data() + cell.size() || !std::isfinite(v)) {
    throw InputError(where + ": column " + std::string(column), "a number", "'" + std::string(cell) + "'");
  }
  return v;
}

std::vector<std::string_view> split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == sep) {
      out.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Parses one CSV table against its spec; every row must have every column, latency_ms >= 0.
ProfileTable parse_table(const std::string& text, const std::string& where, TableSpec spec) {
  ProfileTable t;
  t.file = where;
  t.text_columns = spec.text_columns;
  const std::vector<std::string_view> columns = split(spec.header, ',');
  t.numeric_columns = int(columns.size()) - spec.text_columns;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1) {
      if (line != spec.header)
        throw InputError(where + ":1", "the header '" + std::string(spec.header) + "'", "'" + line + "'");
      continue;
    }
    if (line.empty()) continue;
    const std::string at = where + ":" + std::to_string(line_no);
    const std::vector<std::string_view> cells = split(line, ',');
    if (cells.size() != columns.size()) {
      throw InputError(at, std::to_string(columns.size()) + " columns", std::to_string(cells.size()));
    }
    for (size_t c = 0; c < cells.size(); ++c) {
      if (int(c) < spec.text_columns) {
        t.text.emplace_back(cells[c]);
        continue;
      }
      const double v = parse_number(cells[c], at, columns[c]);
      const bool latency = c + 1 == cells.size();  // >= 0: a step that does no work (top-k of <= k keys)
      if (latency ? v < 0 : (v <= 0 || v != std::floor(v))) {
        throw InputError(at + ": column " + std::string(columns[c]),
                         latency ? "a latency >= 0" : "a positive integer",
                         "'" + std::string(cells[c]) + "'");
      }
      t.numbers.push_back(v);
    }
  }
  if (line_no == 0)
    throw InputError(where + ":1", "the header '" + std::string(spec.header) + "'", "an empty file");
  return t;
}

std::string timing_param_list() {
  std::string s;
  for (int i = 0; i < kTimingParams; ++i)
    s += (i ? ", " : "") + std::string(timing_param_name(TimingParam(i)));
  return s;
}

void check_timing_value(TimingParam p, double v, const std::string& where) {
  const bool flag = p == TimingParam::kOverlapSchedule || p == TimingParam::kSharedExpertsFusion;
  const bool ratio = p == TimingParam::kOpTimeScale || p == TimingParam::kSpeedScale;
  const bool ok = flag                                ? (v == 0 || v == 1)
                  : p == TimingParam::kCudaGraphMaxBs ? (v >= 0 && v == std::floor(v))
                  : ratio                             ? v > 0
                                                      : v >= 0;
  if (!ok)
    throw InputError(where, flag ? "0 or 1" : ratio ? "a value > 0" : "a value >= 0", std::to_string(v));
}

// timing.op_scales: {"value": {"<ledger op>": ratio > 0, ...}, "unit", "source"}.
void read_op_scales(const Json& entry, OpProfile& p, const std::string& at) {
  if (!entry.is_object() || !entry.contains("value") || !entry["value"].is_object())
    throw InputError(at, "{\"value\": {\"<ledger op>\": ratio, ...}, \"unit\", \"source\"}", entry.dump());
  if (!entry.contains("source") && !entry.contains("why"))
    throw InputError(at, "a \"source\" or \"why\"", "neither");
  for (const auto& [op, v] : entry["value"].items()) {
    if (!find_op(op))
      throw InputError(at + ".value", "ledger op names (a_proj, sparse_mla, ...)", "'" + op + "'");
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      throw InputError(at + ".value." + op, "a ratio > 0", v.dump());
    p.op_scales.emplace_back(op, v.get<double>());
  }
}

void read_timing(const Json& j, OpProfile& p, const std::string& where) {
  if (!j.contains("timing")) return;
  if (!j["timing"].is_object()) throw InputError(where + ": timing", "an object", j["timing"].type_name());
  for (const auto& [name, entry] : j["timing"].items()) {
    const std::string at = where + ": timing." + name;
    if (name == kOpScalesKey) {
      read_op_scales(entry, p, at);
      continue;
    }
    const std::optional<TimingParam> param = find_timing_param(name);
    if (!param) throw InputError(at, "one of " + timing_param_list(), "'" + name + "'");
    if (!entry.is_object() || !entry.contains("value") || !entry["value"].is_number()) {
      throw InputError(at, "{\"value\": number, \"unit\", \"source\" or \"why\"}", entry.dump());
    }
    if (!entry.contains("source") && !entry.contains("why"))
      throw InputError(at, "a \"source\" or \"why\"", "neither");
    const double v = entry["value"].get<double>();
    check_timing_value(*param, v, at + ".value");
    p.timing[static_cast<size_t>(*param)] = v;
  }
}

std::string string_field(const Json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_string()) throw InputError(where + ": " + key, "a string", "none");
  return j[key].get<std::string>();
}

void read_tables(const Json& j, const ProfileSource& src, OpProfile& p, const std::string& where) {
  if (!j.contains("tables")) return;
  const Json& tables = j["tables"];
  if (!tables.is_object()) throw InputError(where + ": tables", "an object", tables.type_name());
  for (const auto& [key, file] : tables.items()) {
    int kind = 0;
    while (kind < kProfileTableKinds && profile_table_key(ProfileTableKind(kind)) != key) ++kind;
    if (kind == kProfileTableKinds)
      throw InputError(where + ": tables." + key, "a known table kind", "'" + key + "'");
    if (!file.is_string()) throw InputError(where + ": tables." + key, "a file name", file.dump());
    const std::string name = file.get<std::string>();
    const std::optional<std::string> text = src.read(name);
    if (!text)
      throw InputError(src.where(name), "the table profile.json names (tables." + key + ")", "no such file");
    p.tables[size_t(kind)] = parse_table(*text, src.where(name), table_spec(ProfileTableKind(kind)));
  }
}

// "tables_from": the kernel tables of another profile measured on the same GPU (another engine's kernels
// of the same families), read before this profile's own "tables", which replace it kind by kind. One step
// only: the profile named must hold its own tables.
void read_tables_from(const Json& j, OpProfile& p, const std::string& where) {
  if (!j.contains("tables_from")) return;
  const std::string field = where + ": tables_from";
  const std::string from = string_field(j, "tables_from", where);
  const ProfileSource src = resolve_source(from, field);
  const std::string other_where = src.where("profile.json");
  const std::optional<std::string> text = src.read("profile.json");
  if (!text) throw InputError(other_where, "a profile.json (named by " + field + ")", "no such file");
  Json other;
  try {
    other = Json::parse(*text);
  } catch (const Json::parse_error& e) {
    throw InputError(other_where, "valid JSON", e.what());
  }
  const std::string hardware = string_field(other, "hardware", other_where);
  if (hardware != p.hardware)
    throw InputError(field, "a profile measured on " + p.hardware + " (this profile's hardware)",
                     "'" + from + "' measured on " + hardware);
  if (other.contains("tables_from"))
    throw InputError(field, "a profile with its own tables", "'" + from + "', itself tables_from another");
  read_tables(other, src, p, other_where);
}

}  // namespace

std::optional<TimingParam> find_timing_param(std::string_view name) {
  for (int i = 0; i < kTimingParams; ++i) {
    if (timing_param_name(TimingParam(i)) == name) return TimingParam(i);
  }
  return std::nullopt;
}

std::string_view profile_table_key(ProfileTableKind kind) {
  switch (kind) {
    case ProfileTableKind::kGemm:
      return "gemm";
    case ProfileTableKind::kMoe:
      return "moe";
    case ProfileTableKind::kMlaBmm:
      return "mla_bmm";
    case ProfileTableKind::kMlaDecode:
      return "mla_decode";
    case ProfileTableKind::kMlaPrefill:
      return "mla_prefill";
    case ProfileTableKind::kGqaDecode:
      return "gqa_decode";
    case ProfileTableKind::kGqaPrefill:
      return "gqa_prefill";
    case ProfileTableKind::kComm:
      return "comm";
    case ProfileTableKind::kMlaModuleDecode:
      return "mla_module_decode";
    case ProfileTableKind::kDsa:
      return "dsa";
    case ProfileTableKind::kOps:
      return "ops";
    case ProfileTableKind::kCount:
      break;
  }
  return "?";
}

std::string_view timing_param_name(TimingParam p) {
  switch (p) {
    case TimingParam::kStepCpuOverheadS:
      return "step_cpu_overhead_s";
    case TimingParam::kOverlapSchedule:
      return "overlap_schedule";
    case TimingParam::kCudaGraphMaxBs:
      return "cuda_graph_max_bs";
    case TimingParam::kEagerLaunchGapS:
      return "eager_launch_gap_s";
    case TimingParam::kMoeRoutingAlpha:
      return "moe_routing_alpha";
    case TimingParam::kOpTimeScale:
      return "op_time_scale";
    case TimingParam::kStepCpuPerRequestS:
      return "step_cpu_per_request_s";
    case TimingParam::kRequestLatencyS:
      return "request_latency_s";
    case TimingParam::kSharedExpertsFusion:
      return "shared_experts_fusion";
    case TimingParam::kStepFloorPerLayerS:
      return "step_floor_per_layer_s";
    case TimingParam::kSpeedProbeS:
      return "speed_probe_s";
    case TimingParam::kSpeedScale:
      return "speed_scale";
    case TimingParam::kFirstTokenLatencyS:
      return "first_token_latency_s";
    case TimingParam::kCount:
      break;
  }
  return "?";
}

double timing_param_default(TimingParam p) {
  switch (p) {
    case TimingParam::kStepCpuOverheadS:
      return 0;  // unmeasured: raw kernel sums until `tokenline calibrate` fits it
    case TimingParam::kOverlapSchedule:
      return 1;  // SGLang server_args: disable_overlap_schedule = False
    case TimingParam::kCudaGraphMaxBs:
      return 0;  // no CUDA graphs unless the profile says so
    case TimingParam::kEagerLaunchGapS:
      return 0;
    case TimingParam::kMoeRoutingAlpha:
      return 0;  // balanced: the routing a table measured without saying otherwise
    case TimingParam::kOpTimeScale:
      return 1;  // the ops as profiled until `tokenline calibrate --trace` fits a run
    case TimingParam::kStepCpuPerRequestS:
      return 0;  // unmeasured: no per-request CPU time until `tokenline calibrate` fits it
    case TimingParam::kRequestLatencyS:
      return 0;  // unmeasured: requests reach the engine when sent until `tokenline calibrate` fits it
    case TimingParam::kSharedExpertsFusion:
      return 0;  // the shared expert as its own GEMMs unless the profile names an engine that fuses it
    case TimingParam::kStepFloorPerLayerS:
      return 0;  // unmeasured: a step is the sum of its ops until `tokenline calibrate` fits a floor
    case TimingParam::kSpeedProbeS:
      return 0;  // not recorded: only `tokenline profile` and `calibrate --trace` record one
    case TimingParam::kSpeedScale:
      return 1;  // the times as measured
    case TimingParam::kFirstTokenLatencyS:
      return 0;  // unmeasured: the first token reaches the client at its step until calibrate fits it
    case TimingParam::kCount:
      break;
  }
  return 0;
}

std::vector<std::string> embedded_profile_names() {
  constexpr std::string_view kPrefix = "profiles/", kFile = "/profile.json";
  std::vector<std::string> names;
  for (const EmbeddedText& f : topologies_embedded_specs()) {
    const std::string_view p = f.path;
    if (p.size() > kPrefix.size() + kFile.size() && p.substr(0, kPrefix.size()) == kPrefix &&
        p.substr(p.size() - kFile.size()) == kFile) {
      names.emplace_back(p.substr(kPrefix.size(), p.size() - kPrefix.size() - kFile.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::shared_ptr<OpProfile> load_op_profile(const std::string& name_or_dir) {
  const ProfileSource src = resolve_source(name_or_dir, "--profile");
  const std::string where = src.where("profile.json");
  const std::optional<std::string> text = src.read("profile.json");
  if (!text) throw InputError(where, "a profile.json", "no such file");
  Json j;
  try {
    j = Json::parse(*text);
  } catch (const Json::parse_error& e) {
    throw InputError(where, "valid JSON", e.what());
  }
  auto p = std::make_shared<OpProfile>();
  p->origin = src.label;
  p->name = string_field(j, "name", where);
  p->hardware = string_field(j, "hardware", where);
  p->engine_name = string_field(j, "engine_name", where);
  for (int i = 0; i < kTimingParams; ++i) p->timing[size_t(i)] = timing_param_default(TimingParam(i));
  read_timing(j, *p, where);
  read_tables_from(j, *p, where);
  read_tables(j, src, *p, where);
  if (j.contains("measured_on")) {
    const std::string at = where + ": measured_on";
    p->measured_model = string_field(j["measured_on"], "model", at);
    p->measured_parallel = string_field(j["measured_on"], "parallel", at);
  }
  if (j.contains("engine")) {
    p->has_engine = true;
    p->engine = engine_behavior_from_json(j["engine"], where);  // its messages name "engine: <field>"
  }
  return p;
}

void apply_profile_sets(OpProfile& profile, const std::string& sets) {
  for (std::string_view item : split(sets, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError("--profile-set", "name=value", "'" + std::string(item) + "'");
    const std::string_view name = item.substr(0, eq);
    const std::optional<TimingParam> param = find_timing_param(name);
    if (!param)
      throw InputError("--profile-set", "one of " + timing_param_list(), "'" + std::string(name) + "'");
    const std::string where = "--profile-set " + std::string(name);
    const double v = parse_number(item.substr(eq + 1), where, "value");
    check_timing_value(*param, v, where);
    profile.timing[static_cast<size_t>(*param)] = v;
  }
}

std::shared_ptr<OpProfile> load_op_profile(const std::string& name_or_dir, const std::string& sets) {
  if (name_or_dir.empty()) {
    if (!sets.empty()) throw InputError("--profile-set", "a --profile to override", "no --profile");
    return nullptr;
  }
  std::shared_ptr<OpProfile> profile = load_op_profile(name_or_dir);
  apply_profile_sets(*profile, sets);
  return profile;
}

void set_speed_from_run(OpProfile& profile, double run_probe_s, const std::string& where) {
  const double profiled_s = profile.param(TimingParam::kSpeedProbeS);
  if (!(profiled_s > 0))
    throw InputError(where, "a profile that recorded the machine's speed probe (timing.speed_probe_s)",
                     "profile " + profile.name + " without one");
  if (!(run_probe_s > 0) || !std::isfinite(run_probe_s))
    throw InputError(where, "a run's speed probe > 0 s", std::to_string(run_probe_s));
  profile.timing[static_cast<size_t>(TimingParam::kSpeedScale)] = run_probe_s / profiled_s;
}

}  // namespace tokenline
