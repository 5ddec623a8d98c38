// "engine" object -> EngineBehavior. nlohmann stays in this file.
#include "cost/engine_behavior_json.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common/input_error.h"

namespace tokenline {
namespace {

using nlohmann::json;

// One "engine" object being read: the field names it accepted (to reject the rest) and its location.
class Reader {
 public:
  Reader(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  // The field's value, unwrapping {"value": v, "source": s}; nullptr when absent.
  const json* value(const char* field) {
    seen_.insert(field);
    auto it = obj_.find(field);
    if (it == obj_.end()) return nullptr;
    if (it->is_object()) {
      auto v = it->find("value");
      if (v == it->end())
        fail(field, "a value or {\"value\": ..., \"source\": ...}", "an object without \"value\"");
      return &*v;
    }
    return &*it;
  }
  // true when the field holds "auto" (a derived default).
  static bool is_auto(const json& v) { return v.is_string() && v.get<std::string>() == "auto"; }

  double number(const char* field, double current, double lo, double hi, bool allow_auto) {
    const json* v = value(field);
    if (!v) return current;
    if (allow_auto && is_auto(*v)) return 0;
    if (!v->is_number()) fail(field, allow_auto ? "a number or \"auto\"" : "a number", v->dump());
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi))
      fail(field, "a number in [" + json(lo).dump() + ", " + json(hi).dump() + "]", v->dump());
    return x;
  }
  int64_t integer(const char* field, int64_t current, int64_t lo, int64_t hi, bool allow_auto) {
    const json* v = value(field);
    if (!v) return current;
    if (allow_auto && is_auto(*v)) return 0;
    if (!v->is_number_integer()) fail(field, allow_auto ? "an integer or \"auto\"" : "an integer", v->dump());
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi)
      fail(field, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v->dump());
    return x;
  }
  bool boolean(const char* field, bool current) {
    const json* v = value(field);
    if (!v) return current;
    if (!v->is_boolean()) fail(field, "true or false", v->dump());
    return v->get<bool>();
  }
  // A string field, or nullptr when absent.
  const std::string* text(const char* field) {
    const json* v = value(field);
    if (!v) return nullptr;
    if (!v->is_string()) fail(field, "a string", v->dump());
    return v->get_ptr<const std::string*>();
  }
  const json* object(const char* field) {
    seen_.insert(field);
    auto it = obj_.find(field);
    if (it == obj_.end()) return nullptr;
    if (!it->is_object()) fail(field, "an object", it->dump());
    return &*it;
  }
  std::string at(const char* field) const { return where_ + ": " + field; }
  void reject_unknown() const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!seen_.count(it.key()))
        fail(it.key().c_str(), "a known field (see engine_behavior_json.h)", "an unknown field");
  }
  [[noreturn]] void fail(const char* field, const std::string& expected, const std::string& found) const {
    throw InputError(at(field), expected, found);
  }

 private:
  const json& obj_;
  std::string where_;
  std::set<std::string> seen_;
};

EngineBehavior base_behavior(Reader& r) {
  const std::string* name = r.text("name");
  if (!name || *name == "sglang") return sglang_behavior();
  if (*name == "vllm") return vllm_behavior();
  if (*name == "trtllm") return trtllm_behavior();
  if (*name == "seed") return seed_behavior();
  r.fail("name", "sglang | vllm | trtllm | seed", "'" + *name + "'");
}

// kv_cache_dtype's "auto_by_gpu" (beside its value): {"<hardware>": "<layout>", ...}, what auto is on each
// GPU named; only with the value auto.
void read_kv_auto_by_gpu(const json& field, const std::string& where, EngineBehavior& b) {
  if (!field.is_object() || !field.contains("auto_by_gpu")) return;
  const json& m = field["auto_by_gpu"];
  if (!m.is_object()) throw InputError(where, "an object {\"<hardware>\": \"<kv layout>\"}", m.dump());
  if (!b.kv_layout_auto) throw InputError(where, "auto_by_gpu only beside the value \"auto\"", m.dump());
  b.kv_auto_by_gpu.clear();
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it->is_string()) throw InputError(where + "." + it.key(), "a kv layout name", it->dump());
    b.kv_auto_by_gpu.emplace_back(it.key(), parse_kv_layout(it->get<std::string>(), where + "." + it.key()));
  }
}

void read_kv(Reader& r, const json& engine, EngineBehavior& b) {
  if (const std::string* dtype = r.text("kv_cache_dtype")) {
    b.kv_layout_auto = *dtype == "auto";
    if (!b.kv_layout_auto) b.kv_layout = parse_kv_layout(*dtype, r.at("kv_cache_dtype"));
    read_kv_auto_by_gpu(engine["kv_cache_dtype"], r.at("kv_cache_dtype") + ".auto_by_gpu", b);
  }
  if (const std::string* p = r.text("kv_placement"))
    b.kv_placement = parse_kv_placement(*p, r.at("kv_placement"));
}

void read_memory(Reader& r, EngineBehavior& b, const std::string& where) {
  if (const std::string* m = r.text("memory_rule"))
    b.memory_rule = parse_memory_rule(*m, r.at("memory_rule"));
  b.device_memory_bytes = r.number("device_memory_bytes", b.device_memory_bytes, 1, 1e15, true);
  b.startup_memory_bytes =
      r.number("startup_memory_mib", b.startup_memory_bytes / kBytesPerMib, 0, 1e9, false) * kBytesPerMib;
  b.mem_fraction_static = r.number("mem_fraction_static", b.mem_fraction_static, 0.01, 1, true);
  if (const json* o = r.object("reserved_memory_mib")) {
    Reader x(*o, where + ": reserved_memory_mib");
    ReservedMemoryRule& m = b.reserve;
    m.base_mib = x.number("base", m.base_mib, 0, 1e7, false);
    m.per_chunk_token_mib = x.number("per_chunk_token", m.per_chunk_token_mib, 0, 1e3, false);
    m.min_chunk_tokens = x.integer("min_chunk_tokens", m.min_chunk_tokens, 0, 1 << 24, false);
    m.per_graph_bs_mib = x.number("per_cuda_graph_bs", m.per_graph_bs_mib, 0, 1e3, false);
    m.per_tp_eighth_mib = x.number("per_tp_eighth", m.per_tp_eighth_mib, 0, 1e6, false);
    m.dp_attention_per_graph_bs_mib =
        x.number("dp_attention_per_cuda_graph_bs", m.dp_attention_per_graph_bs_mib, 0, 1e3, false);
    m.dp_attention_large_graph_bs_mib =
        x.number("dp_attention_large_cuda_graph_bs", m.dp_attention_large_graph_bs_mib, 0, 1e3, false);
    m.dp_attention_large_graph_bs = int32_t(x.integer("dp_attention_large_cuda_graph_bs_above",
                                                      m.dp_attention_large_graph_bs, 0, 1 << 20, false));
    m.floor_mib = x.number("floor", m.floor_mib, 0, 1e7, false);
    m.floor_above_mib = x.number("floor_above_device_mib", m.floor_above_mib, 0, 1e9, false);
    x.reject_unknown();
  }
}

void read_scheduling(Reader& r, EngineBehavior& b, const std::string& where) {
  b.chunked_prefill_size = r.integer("chunked_prefill_size", b.chunked_prefill_size, 1, 1 << 24, true);
  b.chunk_split_over_dp = r.boolean("chunk_split_over_dp", b.chunk_split_over_dp);
  b.cuda_graph_max_bs = int32_t(r.integer("cuda_graph_max_bs", b.cuda_graph_max_bs, 1, 1 << 16, true));
  b.max_running_requests =
      int32_t(r.integer("max_running_requests", b.max_running_requests, 1, 1 << 24, true));
  b.mixed_steps = r.boolean("mixed_steps", b.mixed_steps);
  b.plan_ahead = r.boolean("plan_ahead", b.plan_ahead);
  if (const std::string* a = r.text("admission")) b.admission = parse_admission(*a, r.at("admission"));
  if (const std::string* c = r.text("moe_comm")) b.moe_comm = parse_moe_comm(*c, r.at("moe_comm"));
  b.batch_wait_timeout_iters =
      int32_t(r.integer("batch_wait_timeout_iters", b.batch_wait_timeout_iters, 0, 1 << 20, false));
  b.batch_wait_max_tokens_ratio =
      r.number("batch_wait_max_tokens_ratio", b.batch_wait_max_tokens_ratio, 0, 1, false);
  b.attention_dp_balance = r.boolean("attention_dp_balance", b.attention_dp_balance);
  if (const std::string* a = r.text("dp_assign")) {
    const std::optional<PlacementPolicy> p = parse_placement(*a);
    if (!p) throw InputError(r.at("dp_assign"), placement_choices(), "'" + *a + "'");
    b.dp_assign = *p;
  }
  b.attention_dp_timeout_iters =
      int32_t(r.integer("attention_dp_timeout_iters", b.attention_dp_timeout_iters, 0, 1 << 20, false));
  b.attention_dp_batching_wait_iters = int32_t(
      r.integer("attention_dp_batching_wait_iters", b.attention_dp_batching_wait_iters, 0, 1 << 20, false));
  if (const json* o = r.object("new_token_ratio")) {
    Reader x(*o, where + ": new_token_ratio");
    TokenRatio& t = b.ratio;
    t.init = x.number("init", t.init, 0, 1, false);
    t.min_factor = x.number("min_factor", t.min_factor, 0, 1, false);
    t.decay_steps = int32_t(x.integer("decay_steps", t.decay_steps, 0, 1 << 24, false));
    t.retract_decode_steps =
        int32_t(x.integer("retract_decode_steps", t.retract_decode_steps, 0, 1 << 20, false));
    t.clip_max_new_tokens =
        x.integer("clip_max_new_tokens", t.clip_max_new_tokens, 1, int64_t{1} << 40, false);
    t.dp_attention_conservativeness =
        x.number("dp_attention_conservativeness", t.dp_attention_conservativeness, 0.01, 1, false);
    x.reject_unknown();
  }
}

}  // namespace

EngineBehavior engine_behavior_from_json(const json& engine, const std::string& where) {
  if (!engine.is_object()) throw InputError(where + ": engine", "an object", engine.dump());
  const std::string at = where + ": engine";
  Reader r(engine, at);
  EngineBehavior b = base_behavior(r);
  if (const std::string* v = r.text("version")) b.version = *v;
  r.text("description");
  read_kv(r, engine, b);
  read_memory(r, b, at);
  read_scheduling(r, b, at);
  // The MoE runner the profile's moe table timed, and the tables of its others: the profile's (op_profile.cpp
  // read_moe_runners reads them; the engine's memory and admission do not depend on the runner).
  r.text("moe_runner_backend");
  // vLLM's: the MoE backend per weight format (--moe-backend), read the same way.
  r.text("moe_backend");
  r.reject_unknown();
  return b;
}

EngineBehavior parse_engine_behavior(std::string_view profile_json_text, const std::string& where) {
  json doc;
  try {
    doc = json::parse(profile_json_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw InputError(where, "valid JSON with finite numbers", std::string("a parse error: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("engine"))
    throw InputError(where, "an object with an \"engine\" object", "none");
  return engine_behavior_from_json(doc["engine"], where);
}

}  // namespace tokenline
