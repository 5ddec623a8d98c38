#include "calibrate/calibration_parts.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "calibrate/prefill_load.h"
#include "calibrate/sim_point.h"
#include "cost/op_profile.h"
#include "topologies/preset_source.h"

namespace tokenline {
namespace {

using Json = nlohmann::ordered_json;

// "+mtpK" when the row's own sim_args run K MTP draft tokens, else "".
std::string mtp_suffix(const std::vector<std::string>& sim_args) {
  const std::string drafts = option_value(sim_args, "--mtp");
  return drafts.empty() || drafts == "0" ? std::string() : "+mtp" + drafts;
}

}  // namespace

std::vector<size_t> all_indices(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<double> start_values(const std::vector<FitParameter>& fit, const std::string& hardware,
                                 const std::string& profile) {
  const Json hw = Json::parse(resolve_preset(hardware, "hardware").text);
  const std::shared_ptr<const OpProfile> timing = profile.empty() ? nullptr : load_op_profile(profile);
  std::vector<double> v;
  for (const FitParameter& p : fit) {
    double x = p.profile_default;
    switch (p.target) {
      case FitTarget::kHardware:
        x = hw.at(p.group).at(p.field).at("value").get<double>();
        break;
      case FitTarget::kProfileSet:
        if (const std::optional<TimingParam> param = find_timing_param(p.field); timing && param)
          x = timing->param(*param);
        break;
    }
    v.push_back(std::clamp(x, p.lower, p.upper));
  }
  return v;
}

std::vector<std::string> point_layouts(const std::vector<E2ePoint>& points, const std::string& path) {
  std::vector<std::string> out;
  for (const E2ePoint& p : points) {
    const std::string where = path + ":" + std::to_string(p.line);
    if (p.mode == E2eMode::kAggregated) {
      out.push_back(parallel_name(p.agg, where) + mtp_suffix(p.sim_args));
    } else {
      const auto workers = [](const E2eLayout& l) {
        return l.workers_recorded ? std::to_string(l.workers) : std::string("?");
      };
      out.push_back(workers(p.prefill) + "P" + parallel_name(p.prefill, where + ": prefill") + "/" +
                    workers(p.decode) + "D" + parallel_name(p.decode, where + ": decode") +
                    mtp_suffix(p.sim_args));
    }
  }
  return out;
}

std::vector<double> fit_values(const std::function<double(const std::vector<double>&)>& objective,
                               const std::vector<FitParameter>& fit, const std::vector<double>& start,
                               const SearchOptions& search) {
  std::vector<SearchBounds> bounds;
  for (const FitParameter& p : fit) bounds.push_back({p.lower, p.upper, p.log_scale});
  return coordinate_descent(objective, bounds, start, search);
}

std::string values_text(const std::vector<FitParameter>& fit, const std::vector<double>& values) {
  std::string s;
  for (size_t i = 0; i < fit.size(); ++i) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%s%s=%.4g", s.empty() ? "" : " ", fit[i].name.c_str(), values[i]);
    s += buf;
  }
  return s;
}

Json groups_json(const std::vector<GroupError>& groups) {
  Json a = Json::array();
  for (const GroupError& g : groups) {
    Json o = {{"model", g.model}, {"mode", std::string(to_string(g.mode))}};
    if (!g.layout.empty()) o["layout"] = g.layout;  // the by-deployment groups
    o.update({{"deployment_recorded", g.apart != SetApart::kDeploymentUnrecorded},
              {"prefill_overloaded", g.apart == SetApart::kPrefillOverloaded},
              {"points", g.points},
              {"failed", g.failed},
              {"ttft_mape", g.ttft_mape},
              {"tpot_mape", g.tpot_mape},
              {"e2e_mape", g.e2e_mape}});
    a.push_back(std::move(o));
  }
  return a;
}

Json parameter_json(const FitParameter& p, double start, double value) {
  return {
      {"value", value},
      {"start", start},
      {"lower", p.lower},
      {"upper", p.upper},
      {"target", p.target == FitTarget::kHardware ? p.group + "." + p.field : "profile timing " + p.field},
      {"why", p.why},
      {"fitted_by", "tokenline calibrate"}};
}

void mark_prefill_overloaded(std::FILE* out, std::vector<E2ePoint>& points, const PointModels& models,
                             const std::string& hardware, const std::string& profile, bool keep_overloaded) {
  PrefillPricing pricing(hardware, profile);
  for (E2ePoint& p : points) {
    if (!deployment_recorded(p)) continue;
    const std::optional<PrefillLoad> loaded = pricing.load(p, models.config_for(p));
    if (!loaded || loaded->load() <= kMaxPrefillLoad) continue;
    const PrefillLoad& l = *loaded;
    p.prefill_overloaded = !keep_overloaded;
    std::fprintf(
        out,
        "line %lld: prefill load %.2f - %.1f requests/s measured x %.1f ms priced per %lld-token prompt over "
        "%d lane(s): more than %.1fx what the instance can prefill%s\n",
        static_cast<long long>(p.line), l.load(), l.requests_per_s, 1e3 * l.prefill_s,
        static_cast<long long>(p.isl), l.lanes, kMaxPrefillLoad,
        keep_overloaded ? " (kept: --keep-overloaded)" : "; set apart");
  }
}

}  // namespace tokenline
