#include "plan/plan_report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "cost/op_profile.h"
#include "plan/pareto_svg.h"
#include "plan/plan_json.h"
#include "plan/sglang_launch.h"
#include "plan/trtllm_launch.h"
#include "plan/vllm_launch.h"

namespace tokenline {
namespace {

constexpr size_t kTableRows = 10;   // rows of the stdout table
constexpr size_t kClosestRows = 5;  // candidates shown when none meets the SLO

std::string fmt(const char* format, double v) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// A capped row met the SLO at the top of its widest search: its rate is a lower bound, ">=".
std::string rate_text(const PlanRow& r) {
  return (r.rate_capped ? ">=" : "") + fmt("%.3f", r.rate_per_s);
}

std::string table_line(size_t rank, const PlanRow& r) {
  char text[320];
  std::snprintf(text, sizeof text, "%4zu %5d  %-26s %6lld %5d %9s %11.1f %10.1f %10.1f %9.2f  %s", rank,
                r.candidate.id, r.deployment().c_str(), static_cast<long long>(r.candidate.chunk_tokens),
                r.candidate.max_running, rate_text(r).c_str(), r.throughput_per_gpu(), r.tokens_per_user(),
                r.at.ttft_p90_ms, r.at.tpot_p90_ms, row_status_name(r.status).c_str());
  // With a price: the row's dollars per million output tokens (plan --rank cost, docs/cost.md).
  if (r.usd_per_gpu_hour > 0) return text + fmt("  $%.3f/Mtok out\n", r.usd_per_million_output_tokens());
  return std::string(text) + "\n";
}

std::string table_head() {
  return "rank    id  deployment                  chunk  mrun    req/s  tok/s/GPU  tok/s/user  TTFTp90ms "
         "TPOTp90ms  status\n";
}

std::string closest_line(const PlanRow& r) {
  std::string s = "  #" + std::to_string(r.candidate.id) + " " + r.deployment() + " chunk " +
                  std::to_string(r.candidate.chunk_tokens) + " mrun " +
                  std::to_string(r.candidate.max_running) + ": " + fmt("%.2fx the SLO", r.slo_ratio);
  if (r.status == RowStatus::kPruned) return s + " (pruned: " + r.verdict.detail + ")\n";
  return s + fmt(" at %.3f req/s", r.rate_per_s) + fmt(" (TTFT p90 %.1f ms", r.at.ttft_p90_ms) +
         fmt(", TPOT p90 %.1f ms)\n", r.at.tpot_p90_ms);
}

// How the plan's probes priced the MoE under EP (cost_model.cpp): the profile's engine block, else (no
// profile, or one without an engine block) the seed's all-to-all.
MoeComm priced_moe_comm(const PlanTarget& t) {
  const std::shared_ptr<OpProfile> profile = load_op_profile(t.profile, t.profile_set);
  const EngineBehavior* engine = profile_engine(profile.get());
  return engine != nullptr ? engine->moe_comm : MoeComm::kAllToAll;
}

std::vector<std::string> launch_lines(LaunchEngine e, const PlanTarget& t, const Candidate& c,
                                      const std::string& model_path) {
  switch (e) {
    case LaunchEngine::kSglang:
      return sglang_launch_lines(c, model_path, priced_moe_comm(t));
    case LaunchEngine::kVllm:
      return vllm_launch_lines(c, model_path);
    case LaunchEngine::kTrtllm:
      return trtllm_launch_lines(c, model_path);
  }
  return {};
}

// How every candidate was priced: the profile named or chosen as the best available, or the roofline and the
// seed's engine (plan --roofline).
std::string pricing_phrase(const PlanTarget& t) {
  if (t.profile.empty()) return "priced by the roofline and the seed's engine (--roofline)";
  return "priced by profile " + t.profile + (t.profile_set.empty() ? "" : " with " + t.profile_set) +
         (t.profile_defaulted ? ", the best available (no --engine, --profile or --roofline)" : "");
}

std::map<RowStatus, size_t> count_status(const std::vector<PlanRow>& rows) {
  std::map<RowStatus, size_t> n;
  for (const PlanRow& r : rows) ++n[r.status];
  return n;
}

std::string stdout_report(const PlanSetup& setup, const std::vector<PlanRow>& ranked,
                          const std::vector<std::string>& launch) {
  std::map<RowStatus, size_t> n = count_status(ranked);
  std::string s = "tokenline plan: " + std::to_string(ranked.size()) + " candidates, " +
                  std::to_string(n[RowStatus::kMeets] + n[RowStatus::kMisses]) + " simulated, " +
                  std::to_string(n[RowStatus::kPruned]) + " pruned by the ledger; SLO " +
                  slo_phrase(setup.slo) + "; " + pricing_phrase(setup.target) + "\n";
  if (n[RowStatus::kMeets] == 0) {
    s += "no configuration meets " + slo_phrase(setup.slo) + "; the closest candidates:\n";
    for (size_t i = 0; i < ranked.size() && i < kClosestRows; ++i) s += closest_line(ranked[i]);
    return s;
  }
  s += table_head();
  for (size_t i = 0; i < ranked.size() && i < kTableRows && ranked[i].status == RowStatus::kMeets; ++i)
    s += table_line(i + 1, ranked[i]);
  size_t capped = 0;
  for (const PlanRow& r : ranked) capped += r.status == RowStatus::kMeets && r.rate_capped ? 1 : 0;
  if (capped > 0)
    s += std::to_string(capped) +
         " candidate(s) met the SLO at the top of the widest rate search (\">=\"): their limit lies above, "
         "so their order among themselves is not a ranking; --rate-range widens the search\n";
  const PlanRow& best = ranked.front();
  s += "best: " + best.deployment() + " at " + rate_text(best) + " req/s, " +
       fmt("%.1f", best.throughput_per_gpu()) + " output tok/s per GPU, TTFT p90 " +
       fmt("%.1f", best.at.ttft_p90_ms) + " ms, TPOT p90 " + fmt("%.2f", best.at.tpot_p90_ms) + " ms" +
       "\n  reproduce: " + ranked.front().sim_command + "\n  " +
       engine_display_name(launch_engine_name(setup.launch_engine)) + ":\n";
  for (const std::string& line : launch) s += "    " + line + "\n";
  return s;
}

}  // namespace

std::string slo_phrase(const Slo& slo) {
  std::string s;
  if (slo.ttft_s > 0) s += "p90 TTFT <= " + fmt("%g", slo.ttft_s * 1e3) + " ms";
  if (slo.tpot_s > 0)
    s += std::string(s.empty() ? "" : " and ") + "p90 TPOT <= " + fmt("%g", slo.tpot_s * 1e3) + " ms";
  return s.empty() ? "no latency bound (every request completed)" : s;
}

std::string plan_csv(const std::vector<PlanRow>& ranked) {
  std::string s =
      "rank,id,status,deployment,gpus,pd,chunk_tokens,max_running,rate_per_s,rate_capped,time_scale,"
      "throughput_per_gpu,"
      "tokens_per_user,ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,tpot_mean_ms,tpot_p90_ms,tpot_p99_ms,"
      "goodput_requests_per_s,slo_ratio,ttft_floor_ms,tpot_floor_ms,prune_reason,probes,sim_command\n";
  for (size_t i = 0; i < ranked.size(); ++i) {
    const PlanRow& r = ranked[i];
    const Candidate& c = r.candidate;
    s += std::to_string(i + 1) + "," + std::to_string(c.id) + "," + row_status_name(r.status) + "," +
         csv_field(r.deployment()) + "," + std::to_string(c.gpus()) + "," + (c.pd ? "1" : "0") + "," +
         std::to_string(c.chunk_tokens) + "," + std::to_string(c.max_running) + "," +
         fmt("%.4f", r.rate_per_s) + "," + (r.rate_capped ? "1" : "0") + "," + r.time_scale + "," +
         fmt("%.2f", r.throughput_per_gpu()) + "," + fmt("%.2f", r.tokens_per_user()) + "," +
         fmt("%.2f", r.at.ttft_p50_ms) + "," + fmt("%.2f", r.at.ttft_p90_ms) + "," +
         fmt("%.2f", r.at.ttft_p99_ms) + "," + fmt("%.3f", r.at.tpot_mean_ms) + "," +
         fmt("%.3f", r.at.tpot_p90_ms) + "," + fmt("%.3f", r.at.tpot_p99_ms) + "," +
         fmt("%.4f", r.at.goodput_requests_per_s) + "," + fmt("%.4f", r.slo_ratio) + "," +
         fmt("%.3f", r.verdict.ttft_floor_s * 1e3) + "," + fmt("%.4f", r.verdict.tpot_floor_s * 1e3) + "," +
         prune_reason_name(r.verdict.reason) + "," + std::to_string(r.probes) + "," +
         csv_field(r.sim_command) + "\n";
  }
  return s;
}

std::string write_plan_outputs(const PlanSetup& setup, std::vector<PlanRow> rows, const std::string& dir) {
  rank_rows(rows, setup.rank);
  const bool found = !rows.empty() && rows.front().status == RowStatus::kMeets;
  const std::string model_path = "<" + setup.target.model + " checkpoint>";
  const std::vector<std::string> launch =
      found ? launch_lines(setup.launch_engine, setup.target, rows.front().candidate, model_path)
            : std::vector<std::string>{};
  std::vector<ParetoPoint> points;
  for (const PlanRow& r : rows) {
    if (r.status != RowStatus::kMeets) continue;
    points.push_back({r.tokens_per_user(), r.throughput_per_gpu(),
                      "#" + std::to_string(r.candidate.id) + " " + r.deployment() + " chunk " +
                          std::to_string(r.candidate.chunk_tokens) + " mrun " +
                          std::to_string(r.candidate.max_running)});
  }
  const std::string title = setup.target.model + " on " + std::to_string(setup.space.gpus) + "x " +
                            setup.hardware_name + ", " + slo_phrase(setup.slo);
  std::filesystem::create_directories(dir);
  write_file(std::filesystem::path(dir) / "plan.csv", plan_csv(rows));
  write_file(std::filesystem::path(dir) / "plan.json", plan_json(setup, rows, launch));
  write_file(std::filesystem::path(dir) / "pareto.svg", pareto_svg(points, title));
  return stdout_report(setup, rows, launch);
}

}  // namespace tokenline
