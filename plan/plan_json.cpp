#include "plan/plan_json.h"

#include <exception>
#include <map>
#include <nlohmann/json.hpp>

#include "common/input_error.h"

namespace tokenline {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order written: stable, readable files

constexpr const char* kPartialFormat = "tokenline-plan-partial/1";
constexpr const char* kPlanFormat = "tokenline-plan/1";

Json setup_to_json(const PlanSetup& s) {
  const PlanTarget& t = s.target;
  Json j{{"model", t.model},
         {"cluster", t.cluster},
         {"hardware", s.hardware_name},
         {"gpus", s.space.gpus},
         {"workload", t.workload.empty() ? "default" : t.workload},
         {"slo", t.slo},
         {"slo_ttft_s", s.slo.ttft_s},
         {"slo_tpot_s", s.slo.tpot_s},
         {"slo_percentile", "p90"},
         {"max_requests", t.max_requests},
         {"seed", t.seed},
         {"profile", t.profile},
         {"profile_set", t.profile_set},
         {"profile_defaulted", t.profile_defaulted},
         {"launch_engine", launch_engine_name(s.launch_engine)},
         {"chunk_tokens", s.space.chunk_tokens},
         {"max_running", s.space.max_running},
         {"pd", s.space.pd},
         {"rate_lo_log2", s.search.lo_log2},
         {"rate_hi_log2", s.search.hi_log2},
         {"probes", s.search.probes},
         {"rate_max_widenings", s.search.max_widenings},
         {"workload_requests", s.workload.requests},
         {"workload_rate_per_s", s.workload.rate_per_s},
         {"workload_p90_prompt_tokens", s.workload.p90_prompt_tokens},
         {"workload_p90_uncached_tokens", s.workload.p90_uncached_tokens},
         {"workload_max_request_tokens", s.workload.max_request_tokens},
         {"candidates", s.candidates}};
  if (!t.weights_format.empty()) j["weights_format"] = t.weights_format;  // written only when given
  return j;
}

LaunchEngine launch_engine_from_name(const std::string& name) {
  if (name == launch_engine_name(LaunchEngine::kSglang)) return LaunchEngine::kSglang;
  if (name == launch_engine_name(LaunchEngine::kVllm)) return LaunchEngine::kVllm;
  if (name == launch_engine_name(LaunchEngine::kTrtllm)) return LaunchEngine::kTrtllm;
  throw InputError("launch_engine", "sglang, vllm or trtllm", "'" + name + "'");
}

PlanSetup setup_from_json(const Json& j) {
  PlanSetup s;
  s.target.model = j.at("model").get<std::string>();
  s.target.cluster = j.at("cluster").get<std::string>();
  s.hardware_name = j.at("hardware").get<std::string>();
  s.target.hardware = s.hardware_name;
  s.space.gpus = j.at("gpus").get<int32_t>();
  s.target.workload = j.at("workload").get<std::string>();
  if (s.target.workload == "default") s.target.workload.clear();
  s.target.slo = j.at("slo").get<std::string>();
  s.slo.ttft_s = j.at("slo_ttft_s").get<double>();
  s.slo.tpot_s = j.at("slo_tpot_s").get<double>();
  s.target.max_requests = j.at("max_requests").get<int64_t>();
  s.target.seed = j.at("seed").get<uint64_t>();
  s.target.profile = j.value("profile", "");  // partials written before plan --profile: none
  s.target.profile_set = j.value("profile_set", "");
  s.target.profile_defaulted = j.value("profile_defaulted", false);  // before the best-available default
  s.target.weights_format = j.value("weights_format", "");  // partials written before --weights-format: none
  s.launch_engine = launch_engine_from_name(j.value("launch_engine", "sglang"));  // older partials: SGLang
  s.space.chunk_tokens = j.at("chunk_tokens").get<std::vector<int64_t>>();
  s.space.max_running = j.at("max_running").get<std::vector<int32_t>>();
  s.space.pd = j.at("pd").get<bool>();
  s.search.lo_log2 = j.at("rate_lo_log2").get<double>();
  s.search.hi_log2 = j.at("rate_hi_log2").get<double>();
  s.search.probes = j.at("probes").get<int32_t>();
  s.search.max_widenings = j.value("rate_max_widenings", 0);  // before the widening search: none
  s.workload.requests = j.at("workload_requests").get<int64_t>();
  s.workload.rate_per_s = j.at("workload_rate_per_s").get<double>();
  s.workload.p90_prompt_tokens = j.at("workload_p90_prompt_tokens").get<int64_t>();
  s.workload.p90_uncached_tokens = j.at("workload_p90_uncached_tokens").get<int64_t>();
  s.workload.max_request_tokens = j.at("workload_max_request_tokens").get<int64_t>();
  s.candidates = j.at("candidates").get<int32_t>();
  return s;
}

Json candidate_to_json(const Candidate& c) {
  return Json{{"id", c.id},
              {"deployment", c.deployment()},
              {"pd", c.pd},
              {"prefill_layout", c.pd ? c.prefill.name() : ""},
              {"prefill_instances", c.prefill_instances},
              {"layout", c.layout.name()},
              {"instances", c.instances},
              {"gpus", c.gpus()},
              {"chunk_tokens", c.chunk_tokens},
              {"max_running", c.max_running}};
}

Candidate candidate_from_json(const Json& j) {
  Candidate c;
  c.id = j.at("id").get<int32_t>();
  c.pd = j.at("pd").get<bool>();
  if (c.pd) c.prefill = parse_parallel(j.at("prefill_layout").get<std::string>(), "prefill_layout");
  c.prefill_instances = j.at("prefill_instances").get<int32_t>();
  c.layout = parse_parallel(j.at("layout").get<std::string>(), "layout");
  c.instances = j.at("instances").get<int32_t>();
  c.chunk_tokens = j.at("chunk_tokens").get<int64_t>();
  c.max_running = j.at("max_running").get<int32_t>();
  return c;
}

Json probe_to_json(const ProbeResult& p) {
  return Json{
      {"exit_code", p.exit_code},
      {"completed", p.completed},
      {"rejected", p.rejected},
      {"in_flight", p.in_flight},
      {"ttft_ms", {{"p50", p.ttft_p50_ms}, {"p90", p.ttft_p90_ms}, {"p99", p.ttft_p99_ms}}},
      {"tpot_ms",
       {{"mean", p.tpot_mean_ms}, {"p50", p.tpot_p50_ms}, {"p90", p.tpot_p90_ms}, {"p99", p.tpot_p99_ms}}},
      {"output_tokens_per_s", p.output_tokens_per_s},
      {"requests_per_s", p.requests_per_s},
      {"goodput_requests_per_s", p.goodput_requests_per_s}};
}

ProbeResult probe_from_json(const Json& j) {
  ProbeResult p;
  p.exit_code = j.at("exit_code").get<int32_t>();
  p.completed = j.at("completed").get<int64_t>();
  p.rejected = j.at("rejected").get<int64_t>();
  p.in_flight = j.at("in_flight").get<int64_t>();
  const Json& ttft = j.at("ttft_ms");
  p.ttft_p50_ms = ttft.at("p50").get<double>();
  p.ttft_p90_ms = ttft.at("p90").get<double>();
  p.ttft_p99_ms = ttft.at("p99").get<double>();
  const Json& tpot = j.at("tpot_ms");
  p.tpot_mean_ms = tpot.at("mean").get<double>();
  p.tpot_p50_ms = tpot.at("p50").get<double>();
  p.tpot_p90_ms = tpot.at("p90").get<double>();
  p.tpot_p99_ms = tpot.at("p99").get<double>();
  p.output_tokens_per_s = j.at("output_tokens_per_s").get<double>();
  p.requests_per_s = j.at("requests_per_s").get<double>();
  p.goodput_requests_per_s = j.at("goodput_requests_per_s").get<double>();
  return p;
}

Json row_to_json(const PlanRow& r) {
  Json j = candidate_to_json(r.candidate);
  j["status"] = row_status_name(r.status);
  j["prune_reason"] = prune_reason_name(r.verdict.reason);
  j["prune_detail"] = r.verdict.detail;
  j["ttft_floor_s"] = r.verdict.ttft_floor_s;
  j["tpot_floor_s"] = r.verdict.tpot_floor_s;
  j["slo_ratio"] = r.slo_ratio;
  j["probes"] = r.probes;
  j["time_scale"] = r.time_scale;
  j["rate_per_s"] = r.rate_per_s;
  j["rate_capped"] = r.rate_capped;
  j["throughput_per_gpu"] = r.throughput_per_gpu();
  j["tokens_per_user"] = r.tokens_per_user();
  j["at"] = probe_to_json(r.at);
  j["sim_command"] = r.sim_command;
  if (!r.hardware.empty()) j["hardware"] = r.hardware;  // plans over several --hardware
  if (r.usd_per_gpu_hour > 0) {                         // priced plans (docs/cost.md)
    j["usd_per_gpu_hour"] = r.usd_per_gpu_hour;
    j["usd_per_million_output_tokens"] = r.usd_per_million_output_tokens();
  }
  return j;
}

RowStatus status_from_name(const std::string& name) {
  if (name == "meets") return RowStatus::kMeets;
  if (name == "misses") return RowStatus::kMisses;
  if (name == "pruned") return RowStatus::kPruned;
  throw InputError("status", "meets, misses or pruned", "'" + name + "'");
}

PruneReason reason_from_name(const std::string& name) {
  for (PruneReason r : {PruneReason::kNone, PruneReason::kWeights, PruneReason::kKv, PruneReason::kTtftFloor,
                        PruneReason::kTpotFloor}) {
    if (prune_reason_name(r) == name) return r;
  }
  throw InputError("prune_reason", "weights, kv, ttft-floor, tpot-floor or empty", "'" + name + "'");
}

PlanRow row_from_json(const Json& j) {
  PlanRow r;
  r.candidate = candidate_from_json(j);
  r.status = status_from_name(j.at("status").get<std::string>());
  r.verdict.reason = reason_from_name(j.at("prune_reason").get<std::string>());
  r.verdict.detail = j.at("prune_detail").get<std::string>();
  r.verdict.ttft_floor_s = j.at("ttft_floor_s").get<double>();
  r.verdict.tpot_floor_s = j.at("tpot_floor_s").get<double>();
  r.slo_ratio = j.at("slo_ratio").get<double>();
  r.probes = j.at("probes").get<int32_t>();
  r.time_scale = j.at("time_scale").get<std::string>();
  r.rate_per_s = j.at("rate_per_s").get<double>();
  r.rate_capped = j.value("rate_capped", false);  // absent from partials written before the widening search
  r.at = probe_from_json(j.at("at"));
  r.sim_command = j.at("sim_command").get<std::string>();
  return r;
}

}  // namespace

std::string launch_engine_name(LaunchEngine e) {
  switch (e) {
    case LaunchEngine::kSglang:
      return "sglang";
    case LaunchEngine::kVllm:
      return "vllm";
    case LaunchEngine::kTrtllm:
      return "trtllm";
  }
  return "";
}

std::string partial_json(const PlanSetup& setup, int32_t shard, int32_t shards,
                         const std::vector<PlanRow>& rows) {
  Json rows_json = Json::array();
  for (const PlanRow& r : rows) rows_json.push_back(row_to_json(r));
  const Json j{{"format", kPartialFormat},
               {"shard", shard},
               {"shards", shards},
               {"setup", setup_to_json(setup)},
               {"rows", rows_json}};
  return j.dump(2) + "\n";
}

PlanPartial parse_partial(const std::string& text, const std::string& where) {
  try {
    const Json j = Json::parse(text);
    if (j.at("format").get<std::string>() != kPartialFormat)
      throw InputError(where, std::string("a ") + kPartialFormat + " file", j.at("format").dump());
    PlanPartial p;
    p.shard = j.at("shard").get<int32_t>();
    p.shards = j.at("shards").get<int32_t>();
    p.setup = setup_from_json(j.at("setup"));
    p.setup_text = j.at("setup").dump();
    for (const Json& row : j.at("rows")) p.rows.push_back(row_from_json(row));
    return p;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(where, "a tokenline plan partial (plan --shard k/N)", e.what());
  }
}

std::string plan_json(const PlanSetup& setup, const std::vector<PlanRow>& ranked,
                      const std::vector<std::string>& best_launch) {
  std::map<std::string, int32_t> by_status;
  std::map<std::string, int32_t> pruned;
  Json rows_json = Json::array();
  for (const PlanRow& r : ranked) {
    ++by_status[row_status_name(r.status)];
    if (r.status == RowStatus::kPruned) ++pruned[prune_reason_name(r.verdict.reason)];
    rows_json.push_back(row_to_json(r));
  }
  Json j{{"format", kPlanFormat}, {"setup", setup_to_json(setup)}};
  j["counts"] = {{"candidates", ranked.size()},
                 {"meets", by_status["meets"]},
                 {"misses", by_status["misses"]},
                 {"pruned", by_status["pruned"]}};
  j["pruned_by_reason"] = pruned;
  const bool found = !ranked.empty() && ranked.front().status == RowStatus::kMeets;
  j["best"] = found ? Json{{"id", ranked.front().candidate.id},
                           {"deployment", ranked.front().deployment()},
                           {"sim_command", ranked.front().sim_command},
                           {launch_engine_name(setup.launch_engine), best_launch}}
                    : Json(nullptr);
  j["rows"] = rows_json;
  return j.dump(2) + "\n";
}

}  // namespace tokenline
