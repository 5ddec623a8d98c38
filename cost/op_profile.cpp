// load_op_profile: profile.json + its CSV tables, from the embedded copies or a directory, into OpProfile.
#include "cost/op_profile.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/json_depth.h"
#include "common/number_text.h"
#include "cost/engine_behavior_json.h"
#include "cost/op_profile_envelope.h"
#include "cost/step_cost.h"
#include "cost/time_source_transfer.h"
#include "topologies/embedded_specs.h"

namespace tokenline {
namespace {

using Json = nlohmann::json;
constexpr const char* kOpScalesKey = "op_scales";  // timing.op_scales: per-op scales, not a TimingParam

// The ranges profile numbers must fall in (finite, before any arithmetic prices a step with them):
// A table's key columns (tokens, m, n, k, heads, bytes, ...): integers a double holds exactly.
constexpr double kMaxTableKey = 9007199254740992.0;  // 2^53
// One measured op call: the slowest rows published (MLA prefill at 128K tokens) take seconds; an hour is
// ~1000x that, so a larger latency is a unit or typing error, not a measurement.
constexpr double kMaxLatencyMs = 3.6e6;
// A timing term in seconds (step_cpu_overhead_s, eager_launch_gap_s, step_floor_per_layer_s, ...): the
// largest fitted term is first_token_latency_s 0.187 s (h200-sglang) and calibrate searches none beyond
// 0.5 s (calibrate/fit_parameter.cpp); 60 s is 120x that and keeps every step's time far below the
// simulated horizon (limits::kMaxSimulatedS).
constexpr double kMaxTimingTermS = 60;
// A time ratio (op_time_scale, speed_scale, op_scales): a machine a million times faster or slower than
// the profiled one is another machine.
constexpr double kMinTimeRatio = 1e-6, kMaxTimeRatio = 1e6;
// cuda_graph_max_bs: the engine block's own bound (engine_behavior_json.cpp: 1 << 16).
constexpr double kMaxCudaGraphBs = 65536;
// moe_routing_alpha: a power-law exponent; the moe tables measure alphas up to ~1.5, and at 100 every
// token already goes to the same experts.
constexpr double kMaxRoutingAlpha = 100;
// moe_contiguous_align: rows per expert block; DeepGEMM aligns to 128 on SM90 (its
// get_mk_alignment_for_contiguous_layout), and a block taller than 4,096 rows is no tile any grouped GEMM
// runs.
constexpr double kMaxContiguousAlign = 4096;

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
    case ProfileTableKind::kGdn:
      return {"kernel,phase,k_heads,k_dim,v_heads,v_dim,conv,batch,tokens,latency_ms", 2};
    case ProfileTableKind::kDsv4:
      return {"module,phase,hidden,heads,prefix,batch,tokens,latency_ms", 2};
    case ProfileTableKind::kKda:
      return {"kernel,phase,heads,head_dim,conv,batch,tokens,latency_ms", 2};
    case ProfileTableKind::kMsa:
      return {"module,phase,hidden,heads,prefix,batch,tokens,latency_ms", 2};
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
    return read_bounded_file((dir / file).string(), limits::kMaxProfileFileBytes, where(file));
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

// Where a table row's key (its columns but latency_ms) was first seen, and its latency there.
struct SeenRow {
  int line = 0;
  double latency = 0;
};

// Parses one CSV table against its spec; every row must have every column, key columns integers in
// [1, 2^53] (a prefix column, cached tokens, from 0), latency_ms in [0, kMaxLatencyMs], and no key twice (one
// shape measured twice is ambiguous: which latency prices it?).
ProfileTable parse_table(const std::string& text, const std::string& where, TableSpec spec) {
  ProfileTable t;
  t.file = where;
  t.text_columns = spec.text_columns;
  const std::vector<std::string_view> columns = split(spec.header, ',');
  t.numeric_columns = int(columns.size()) - spec.text_columns;
  std::map<std::string, SeenRow> seen;
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
    std::string key;
    double latency = 0;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (int(c) < spec.text_columns) {
        t.text.emplace_back(cells[c]);
        key.append(cells[c]).push_back('\x1f');
        continue;
      }
      const double v = parse_number(cells[c], at, columns[c]);
      const bool is_latency = c + 1 == cells.size();  // >= 0: a step that does no work (top-k of <= k keys)
      const double lowest = columns[c] == "prefix" ? 0 : 1;
      if (is_latency ? !(v >= 0 && v <= kMaxLatencyMs)
                     : !(v >= lowest && v <= kMaxTableKey && v == std::floor(v))) {
        throw InputError(at + ": column " + std::string(columns[c]),
                         is_latency    ? "a latency in [0, 3.6e6] ms"
                         : lowest == 0 ? "an integer in [0, 2^53]"
                                       : "an integer in [1, 2^53]",
                         "'" + std::string(cells[c]) + "'");
      }
      t.numbers.push_back(v);
      if (is_latency) {
        latency = v;
      } else {
        key.append(std::to_string(int64_t(v))).push_back('\x1f');
      }
    }
    const auto [it, fresh] = seen.try_emplace(key, SeenRow{line_no, latency});
    if (!fresh) {
      const std::string earlier = "line " + std::to_string(it->second.line);
      throw InputError(at, "each shape once (this one is also on " + earlier + ")",
                       it->second.latency == latency
                           ? std::string("a duplicate row")
                           : "a conflicting latency " + number_text(latency) + " ms (" + earlier + ": " +
                                 number_text(it->second.latency) + " ms)");
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

// The range of one timing parameter, as messages state it.
struct TimingRange {
  double lo = 0, hi = 0;
  bool integer = false;
  std::string text() const {
    return std::string(integer ? "an integer" : "a value") + " in [" + number_text(lo) + ", " +
           number_text(hi) + "]";
  }
  bool holds(double v) const { return v >= lo && v <= hi && (!integer || v == std::floor(v)); }
};

TimingRange timing_range(TimingParam p) {
  switch (p) {
    case TimingParam::kOverlapSchedule:
    case TimingParam::kSharedExpertsFusion:
    case TimingParam::kMoeW4a16Marlin:
    case TimingParam::kDsaTrtllmBackend:
      return {0, 1, true};
    case TimingParam::kCudaGraphMaxBs:
      return {0, kMaxCudaGraphBs, true};
    case TimingParam::kMoeContiguousAlign:
      return {0, kMaxContiguousAlign, true};
    case TimingParam::kMoeRoutingAlpha:
      return {0, kMaxRoutingAlpha, false};
    case TimingParam::kOpTimeScale:
    case TimingParam::kSpeedScale:
      return {kMinTimeRatio, kMaxTimeRatio, false};
    case TimingParam::kStepCpuOverheadS:
    case TimingParam::kEagerLaunchGapS:
    case TimingParam::kStepCpuPerRequestS:
    case TimingParam::kRequestLatencyS:
    case TimingParam::kStepFloorPerLayerS:
    case TimingParam::kSpeedProbeS:
    case TimingParam::kFirstTokenLatencyS:
    case TimingParam::kPdFirstTokenLatencyS:
    case TimingParam::kPdHandoffPerTokenS:
    case TimingParam::kSyncStepCpuS:
    case TimingParam::kSyncStepCpuPerRequestS:
    case TimingParam::kEagerHostPerMlaLayerS:
      return {0, kMaxTimingTermS, false};
    case TimingParam::kCount:
      break;
  }
  return {};
}

// Every timing value a profile.json or --profile-set gives: finite and in its parameter's range (`where`
// names the key; the message states what was found and the range allowed).
void check_timing_value(TimingParam p, double v, const std::string& where) {
  const TimingRange r = timing_range(p);
  if (!std::isfinite(v) || !r.holds(v)) throw InputError(where, r.text(), number_text(v));
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
    if (!v.is_number() || !(v.get<double>() >= kMinTimeRatio && v.get<double>() <= kMaxTimeRatio))
      throw InputError(at + ".value." + op, "a ratio in [1e-06, 1e+06]", v.dump());
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
    p.timing_given[static_cast<size_t>(*param)] = true;
  }
}

// profile.json text -> JSON: nested at most kMaxJsonDepth, numbers a double holds (1e999 is refused
// here, not later as an escaped out_of_range), an object at the top.
Json parse_profile_json(const std::string& text, const std::string& where) {
  require_json_depth(text, where);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw InputError(where, "valid JSON with finite numbers", e.what());
  }
  if (!j.is_object()) throw InputError(where, "a JSON object", j.type_name());
  return j;
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
    // The monotone rule: no row prices less work slower than the table measured more (op_profile_envelope.h).
    apply_lower_envelope(p.tables[size_t(kind)], ProfileTableKind(kind));
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
  const Json other = parse_profile_json(*text, other_where);
  const std::string hardware = string_field(other, "hardware", other_where);
  if (hardware != p.hardware)
    throw InputError(field, "a profile measured on " + p.hardware + " (this profile's hardware)",
                     "'" + from + "' measured on " + hardware);
  if (other.contains("tables_from"))
    throw InputError(field, "a profile with its own tables", "'" + from + "', itself tables_from another");
  read_tables(other, src, p, other_where);
}

// The engine block's "moe_runner_backend" (SGLang) or "moe_backend" (vLLM, TensorRT-LLM): {"value": what the
// moe table timed, "tables": {name: file}}. Its value is validated by engine_behavior_from_json; the tables
// are read here, with the profile's others.
void read_moe_tables(const Json& engine, const char* key, const ProfileSource& src, std::string& value,
                     std::vector<std::pair<std::string, ProfileTable>>& out, const std::string& where) {
  if (!engine.is_object() || !engine.contains(key)) return;
  const Json& field = engine[key];
  const std::string at = where + ": engine: " + key;
  if (!field.is_object() || !field.contains("value") || !field["value"].is_string())
    throw InputError(at, "{\"value\": \"<name>\", \"tables\": {...}, \"source\": ...}", field.dump());
  value = field["value"].get<std::string>();
  if (!field.contains("tables")) return;
  const Json& tables = field["tables"];
  if (!tables.is_object()) throw InputError(at + ".tables", "an object {name: file}", tables.dump());
  for (const auto& [name, file] : tables.items()) {
    if (!file.is_string()) throw InputError(at + ".tables." + name, "a file name", file.dump());
    const std::string file_name = file.get<std::string>();
    const std::optional<std::string> text = src.read(file_name);
    if (!text)
      throw InputError(src.where(file_name), "the table " + at + ".tables." + name + " names",
                       "no such file");
    out.emplace_back(name, parse_table(*text, src.where(file_name), table_spec(ProfileTableKind::kMoe)));
    // The monotone rule, as for the profile's own tables (read_tables): a runner's table selected by a flag
    // prices as it would have had it been the profile's moe table.
    apply_lower_envelope(out.back().second, ProfileTableKind::kMoe);
  }
}

// vLLM's MoE backends (vllm/config/kernel.py MoEBackend, the choices of --moe-backend; KernelConfig).
constexpr std::array<std::string_view, 9> kVllmMoeBackends = {"auto",
                                                              "triton",
                                                              "deep_gemm",
                                                              "cutlass",
                                                              "flashinfer_trtllm",
                                                              "flashinfer_cutlass",
                                                              "flashinfer_cutedsl",
                                                              "marlin",
                                                              "aiter"};

// TensorRT-LLM's MoE backends (MoeConfig.backend, the `moe_config: backend:` of --extra_llm_api_options:
// tensorrt_llm/llmapi/llm_args.py, 1.x; default CUTLASS).
constexpr std::array<std::string_view, 7> kTrtllmMoeBackends = {"CUTLASS",  "CUTEDSL", "WIDEEP", "TRTLLM",
                                                                "DEEPGEMM", "VANILLA", "TRITON"};

// Throws InputError naming `where`, with every accepted name, unless `name` is one of `names` (an engine's
// MoE runner or backend list).
void require_one_of(std::span<const std::string_view> names, const std::string& name,
                    const std::string& where) {
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string expected;
  for (std::string_view n : names) expected += (expected.empty() ? "" : " | ") + std::string(n);
  throw InputError(where, expected, "'" + name + "'");
}

// The dtype labels of the quantized formats' moe rows (own_rows, op_profile_resolve.cpp): the keys
// engine.moe_backend.formats may name. BF16 is not one: its rows are what a format without rows is priced
// from.
constexpr std::array<std::string_view, 7> kQuantizedMoeLabels = {
    "fp8", "fp8_block", "nvfp4", "w4a16_nvfp4", "w4a16_mxfp4", "int4_wo", "int8_wo"};

// The MoE backends a profile of `engine` may name under engine.moe_backend (`at`: its field, for the message
// that refuses it in an SGLang profile, whose MoE kernels are named by moe_runner_backend).
std::span<const std::string_view> engine_moe_backends(const std::string& engine, const std::string& at) {
  if (engine == "trtllm") return kTrtllmMoeBackends;
  if (engine == "vllm") return kVllmMoeBackends;
  throw InputError(at, "a vLLM or TensorRT-LLM profile (SGLang's MoE runners: moe_runner_backend)",
                   "a profile of engine " + engine);
}

// engine.moe_backend.<key>: an object {name: value}, or nullptr where the profile does not give it; `at` is
// set to the field's name for messages. Throws InputError when it is not an object.
const Json* moe_backend_map(const Json& engine, const char* key, const char* shape, const std::string& where,
                            std::string& at) {
  if (!engine.is_object() || !engine.contains("moe_backend")) return nullptr;
  const Json& field = engine["moe_backend"];
  if (!field.is_object() || !field.contains(key)) return nullptr;
  at = where + ": engine: moe_backend." + key;
  const Json& map = field[key];
  if (!map.is_object()) throw InputError(at, shape, map.dump());
  return &map;
}

// engine.moe_backend.contiguous_align: {backend: rows}, the backends whose fused MoE pads each local expert's
// rows to that alignment in a worst-case buffer (TimingParam::kMoeContiguousAlign).
void read_contiguous_align(const Json& engine, OpProfile& p, const std::string& where) {
  std::string at;
  const Json* aligns = moe_backend_map(engine, "contiguous_align", "an object {backend: rows}", where, at);
  if (aligns == nullptr) return;
  for (const auto& [name, rows] : aligns->items()) {
    require_one_of(engine_moe_backends(p.engine_name, at), name, at + "." + name);
    if (!rows.is_number_integer() || rows.get<int64_t>() < 1 ||
        rows.get<int64_t>() > int64_t(kMaxContiguousAlign))
      throw InputError(at + "." + name, "an integer in [1, " + number_text(kMaxContiguousAlign) + "]",
                       rows.dump());
    p.moe_backend_contiguous_align.emplace_back(name, rows.get<int64_t>());
  }
}

// engine.moe_backend.formats: {dtype: backend}, the quantized formats whose moe rows time that backend's
// kernel.
void read_format_backends(const Json& engine, OpProfile& p, const std::string& where) {
  std::string at;
  const Json* formats = moe_backend_map(engine, "formats", "an object {dtype: backend}", where, at);
  if (formats == nullptr) return;
  const std::span<const std::string_view> backends = engine_moe_backends(p.engine_name, at);
  for (const auto& [dtype, backend] : formats->items()) {
    require_one_of(kQuantizedMoeLabels, dtype, at + "." + dtype);
    if (!backend.is_string()) throw InputError(at + "." + dtype, "a backend name", backend.dump());
    require_one_of(backends, backend.get<std::string>(), at + "." + dtype);
    p.moe_format_backends.emplace_back(dtype, backend.get<std::string>());
  }
}

void read_moe_runners(const Json& engine, const ProfileSource& src, OpProfile& p, const std::string& where) {
  read_moe_tables(engine, "moe_runner_backend", src, p.moe_runner, p.moe_runner_tables, where);
  read_moe_tables(engine, "moe_backend", src, p.moe_backend, p.moe_backend_tables, where);
  read_contiguous_align(engine, p, where);
  read_format_backends(engine, p, where);
}

// `moe` without its rows of the dtypes in `drop` (column 0: the dtype label), then with `add`'s rows
// appended.
ProfileTable rebuilt_moe(const ProfileTable& moe, const std::set<std::string_view>& drop,
                         const ProfileTable* add) {
  ProfileTable out = moe;
  out.text.clear();
  out.numbers.clear();
  auto append = [&out](const ProfileTable& t, size_t i) {
    for (int c = 0; c < t.text_columns; ++c) out.text.emplace_back(t.text_at(i, c));
    for (int c = 0; c < t.numeric_columns; ++c) out.numbers.push_back(t.at(i, c));
  };
  for (size_t i = 0; i < moe.rows(); ++i)
    if (!drop.count(moe.text_at(i, 0))) append(moe, i);
  if (add != nullptr)
    for (size_t i = 0; i < add->rows(); ++i) append(*add, i);
  return out;
}

// `moe` with the rows of every dtype `rows` holds replaced by `rows`' rows.
ProfileTable replace_dtype_rows(const ProfileTable& moe, const ProfileTable& rows) {
  std::set<std::string_view> dtypes;
  for (size_t i = 0; i < rows.rows(); ++i) dtypes.insert(rows.text_at(i, 0));
  return rebuilt_moe(moe, dtypes, &rows);
}

// SGLang's MoE runners (python/sglang/srt/layers/moe/utils.py MoeRunnerBackend, 0.5.x): the choices of
// --moe-runner-backend.
constexpr std::array<std::string_view, 9> kSglangMoeRunners = {"auto",
                                                               "deep_gemm",
                                                               "triton",
                                                               "triton_kernel",
                                                               "flashinfer_trtllm",
                                                               "flashinfer_cutlass",
                                                               "flashinfer_mxfp4",
                                                               "flashinfer_cutedsl",
                                                               "cutlass"};

}  // namespace

bool select_moe_runner(OpProfile& profile, const std::string& backend, const std::string& where) {
  require_one_of(kSglangMoeRunners, backend, where);
  if (backend == profile.moe_runner) return true;
  for (auto& [runner, table] : profile.moe_runner_tables) {
    if (runner != backend) continue;
    std::swap(profile.tables[size_t(ProfileTableKind::kMoe)], table);
    runner = profile.moe_runner;  // the table swapped out stays selectable by its runner's name
    profile.moe_runner = backend;
    return true;
  }
  return false;
}

bool select_moe_backend(OpProfile& profile, const std::string& backend, const std::string& where) {
  if (profile.engine_name == "trtllm")
    require_one_of(kTrtllmMoeBackends, backend, where);
  else
    require_one_of(kVllmMoeBackends, backend, where);
  if (profile.engine_name != "vllm" && profile.engine_name != "trtllm")
    throw InputError(
        where, "a vLLM or TensorRT-LLM profile (an SGLang deployment's MoE runner: --moe-runner-backend)",
        "profile '" + profile.name + "' of engine " + profile.engine_name);
  if (backend == profile.moe_backend) return true;
  bool known = false;
  std::set<std::string> own;  // the formats the backend's own table prices
  ProfileTable& moe = profile.tables[size_t(ProfileTableKind::kMoe)];
  for (const auto& [name, table] : profile.moe_backend_tables) {
    if (name != backend) continue;
    moe = replace_dtype_rows(moe, table);
    for (size_t i = 0; i < table.rows(); ++i) own.emplace(table.text_at(i, 0));
    known = true;
  }
  // A format the moe table times with another backend's kernel and this backend has no rows of: priced as a
  // format without rows, not by that kernel (TensorRT-LLM's TRTLLM backend on B300, whose NVFP4 rows are
  // CUTLASS's: docs/hardware-and-engines.md "MoE backends and weight formats").
  for (const auto& [dtype, by] : profile.moe_format_backends)
    if (by != backend && !own.count(dtype)) moe = rebuilt_moe(moe, {dtype}, nullptr);
  // A backend whose grouped GEMM pads every local expert's rows (engine.moe_backend.contiguous_align): the
  // moe table keeps pricing the routed rows, the padding adds (a --profile-set of the term stays).
  constexpr auto kAlign = TimingParam::kMoeContiguousAlign;
  for (const auto& [name, rows] : profile.moe_backend_contiguous_align) {
    if (name != backend) continue;
    if (!profile.given(kAlign)) profile.timing[size_t(kAlign)] = double(rows);
    known = true;
  }
  if (known) profile.moe_backend = backend;
  return known;
}

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
    case ProfileTableKind::kGdn:
      return "gdn";
    case ProfileTableKind::kDsv4:
      return "dsv4";
    case ProfileTableKind::kKda:
      return "kda";
    case ProfileTableKind::kMsa:
      return "msa";
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
    case TimingParam::kMoeW4a16Marlin:
      return "moe_w4a16_marlin";
    case TimingParam::kPdFirstTokenLatencyS:
      return "pd_first_token_latency_s";
    case TimingParam::kPdHandoffPerTokenS:
      return "pd_handoff_per_token_s";
    case TimingParam::kSyncStepCpuS:
      return "sync_step_cpu_s";
    case TimingParam::kSyncStepCpuPerRequestS:
      return "sync_step_cpu_per_request_s";
    case TimingParam::kDsaTrtllmBackend:
      return "dsa_trtllm_backend";
    case TimingParam::kMoeContiguousAlign:
      return "moe_contiguous_align";
    case TimingParam::kEagerHostPerMlaLayerS:
      return "eager_host_per_mla_layer_s";
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
    case TimingParam::kMoeW4a16Marlin:
      return 0;  // the format's own kernel (vLLM's default MXFP4 backend on the GPU)
    case TimingParam::kPdFirstTokenLatencyS:
      return 0;  // unmeasured: a disaggregated first token costs what an aggregated one does beyond its steps
    case TimingParam::kPdHandoffPerTokenS:
      return 0;  // unmeasured: the KV leaves as soon as its sender and the link are free
    case TimingParam::kSyncStepCpuS:
    case TimingParam::kSyncStepCpuPerRequestS:
      return 0;  // not given: the serial step keeps step_cpu_overhead_s / step_cpu_per_request_s
    case TimingParam::kDsaTrtllmBackend:
      return 0;  // SGLang's default NSA backends (server_args.py _set_default_nsa_backends): no trtllm
    case TimingParam::kMoeContiguousAlign:
      return 0;  // the moe table's kernel as measured: no rows beyond the routed ones
    case TimingParam::kEagerHostPerMlaLayerS:
      return 0;  // unmeasured: an eager step is the sum of its ops until `tokenline calibrate` fits it
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

namespace {

// Reads and checks the profile `src` holds (load_op_profile's work).
std::shared_ptr<OpProfile> read_op_profile(const ProfileSource& src) {
  const std::string where = src.where("profile.json");
  const std::optional<std::string> text = src.read("profile.json");
  if (!text) throw InputError(where, "a profile.json", "no such file");
  const Json j = parse_profile_json(*text, where);
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
    read_moe_runners(j["engine"], src, *p, where);
  }
  return p;
}

}  // namespace

std::shared_ptr<OpProfile> load_op_profile(const std::string& name_or_dir) {
  if (is_transfer_name(name_or_dir)) return load_transferred_profile(name_or_dir);
  const ProfileSource src = resolve_source(name_or_dir, "--profile");
  if (src.embedded_prefix.empty()) return read_op_profile(src);  // a directory: its files may change
  // An embedded profile is compiled into the binary: it is parsed once a process (its tables are most of
  // the time a test binary or a planner spends loading profiles), and each caller gets its own copy to
  // change.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const OpProfile>> parsed;
  std::shared_ptr<const OpProfile> profile;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = parsed.find(src.embedded_prefix); it != parsed.end()) profile = it->second;
  }
  if (!profile) {
    profile = read_op_profile(src);
    const std::lock_guard<std::mutex> lock(mutex);
    parsed.emplace(src.embedded_prefix, profile);
  }
  return std::make_shared<OpProfile>(*profile);
}

void apply_profile_sets(OpProfile& profile, const std::string& sets) {
  std::set<TimingParam> given;
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
    if (!given.insert(*param).second)
      throw InputError(where, "each name once", "'" + std::string(name) + "' twice in '" + sets + "'");
    const double v = parse_number(item.substr(eq + 1), where, "value");
    check_timing_value(*param, v, where);
    profile.timing[static_cast<size_t>(*param)] = v;
    profile.timing_given[static_cast<size_t>(*param)] = true;
  }
}

std::string apply_speculative_schedule(OpProfile& profile, int32_t mtp_drafts) {
  if (mtp_drafts <= 0 || profile.engine_name != "sglang") return "";
  if (profile.param(TimingParam::kOverlapSchedule) == 0) return "";
  profile.timing[static_cast<size_t>(TimingParam::kOverlapSchedule)] = 0;
  return "MTP as SGLang 0.5.9's speculative decoding V1, without the overlap scheduler "
         "(SGLANG_ENABLE_SPEC_V2 unset; --profile-set overlap_schedule=1 for V2)";
}

std::shared_ptr<OpProfile> load_op_profile(const std::string& name_or_dir, const std::string& sets,
                                           int32_t mtp_drafts) {
  if (name_or_dir.empty()) {
    if (!sets.empty()) throw InputError("--profile-set", "a --profile to override", "no --profile");
    return nullptr;
  }
  std::shared_ptr<OpProfile> profile = load_op_profile(name_or_dir);
  apply_speculative_schedule(*profile, mtp_drafts);
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
  const double scale = run_probe_s / profiled_s;
  check_timing_value(TimingParam::kSpeedScale, scale,
                     where + " (speed_scale = the run's probe over the profile's)");
  profile.timing[static_cast<size_t>(TimingParam::kSpeedScale)] = scale;
}

}  // namespace tokenline
