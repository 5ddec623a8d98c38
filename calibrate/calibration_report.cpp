#include "calibrate/calibration_report.h"

#include <algorithm>
#include <cmath>

#include "calibrate/point_models.h"
#include "calibrate/prefill_load.h"

namespace tokenline {
namespace {

constexpr double kFailedApe = 1.0;  // a failed simulation counts as a 100% error, whatever the parameters
constexpr double kObjectiveApeCap = kFailedApe;  // no point counts more in the objective than a failed one

double ape(double predicted, double measured) {
  return std::fabs(predicted - measured) / measured;
}

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", 100.0 * fraction);
  return buf;
}

// "agg", "disagg"; "disagg?" where the row does not record its deployment, "agg!" where its measured rate
// needs more prefill than the instance has.
std::string mode_label(E2eMode mode, SetApart apart) {
  const char* mark = apart == SetApart::kDeploymentUnrecorded ? "?"
                     : apart == SetApart::kPrefillOverloaded  ? "!"
                                                              : "";
  return std::string(to_string(mode)) + mark;
}

void print_prediction(std::FILE* out, const SimPrediction& p, const E2ePoint& e) {
  if (!p.ok) {
    std::fprintf(out, " | %10s %6s %9s %6s %6s", "failed", "", "", "", "");
    return;
  }
  std::fprintf(out, " | %10.1f %6.2f %9.2f %6.2f %6.2f", p.ttft_ms, p.ttft_ms / e.ttft_ms, p.tpot_ms,
               p.tpot_ms / e.tpot_ms,
               request_latency_ms(e, p.ttft_ms, p.tpot_ms) / request_latency_ms(e, e.ttft_ms, e.tpot_ms));
}

// Groups by (model, mode, set apart) and, with `layouts`, by layout too; first-appearance order.
std::vector<GroupError> grouped(const std::vector<E2ePoint>& points, const std::vector<size_t>& which,
                                const std::vector<std::string>* layouts,
                                const std::vector<SimPrediction>& predictions) {
  std::vector<GroupError> groups;
  for (size_t k = 0; k < which.size(); ++k) {
    const E2ePoint& e = points[which[k]];
    const std::string model = model_label(e.model_path);
    const std::string layout = layouts ? (*layouts)[which[k]] : std::string();
    GroupError* g = nullptr;
    for (GroupError& candidate : groups) {
      if (candidate.model == model && candidate.mode == e.mode && candidate.apart == set_apart(e) &&
          candidate.layout == layout)
        g = &candidate;
    }
    if (g == nullptr)
      g = &groups.emplace_back(
          GroupError{.model = model, .mode = e.mode, .apart = set_apart(e), .layout = layout});
    const SimPrediction& p = predictions[k];
    g->points += 1;
    g->failed += p.ok ? 0 : 1;
    const double ttft = p.ok ? ape(p.ttft_ms, e.ttft_ms) : kFailedApe;
    const double tpot = p.ok ? ape(p.tpot_ms, e.tpot_ms) : kFailedApe;
    g->ttft_mape += ttft;
    g->tpot_mape += tpot;
    g->e2e_mape +=
        p.ok ? ape(request_latency_ms(e, p.ttft_ms, p.tpot_ms), request_latency_ms(e, e.ttft_ms, e.tpot_ms))
             : kFailedApe;
    g->ttft_capped += std::min(ttft, kObjectiveApeCap);
    g->tpot_capped += std::min(tpot, kObjectiveApeCap);
  }
  for (GroupError& g : groups) {
    g.ttft_mape /= g.points;
    g.tpot_mape /= g.points;
    g.e2e_mape /= g.points;
    g.ttft_capped /= g.points;
    g.tpot_capped /= g.points;
  }
  return groups;
}

}  // namespace

double request_latency_ms(const E2ePoint& point, double ttft_ms, double tpot_ms) {
  return ttft_ms + (mean_length(point.osl, point.length_range_ratio) - 1) * tpot_ms;
}

std::vector<GroupError> group_errors(const std::vector<E2ePoint>& points, const std::vector<size_t>& which,
                                     const std::vector<SimPrediction>& predictions) {
  return grouped(points, which, nullptr, predictions);
}

std::vector<GroupError> deployment_errors(const std::vector<E2ePoint>& points,
                                          const std::vector<size_t>& which,
                                          const std::vector<std::string>& layouts,
                                          const std::vector<SimPrediction>& predictions) {
  return grouped(points, which, &layouts, predictions);
}

std::string group_mode(const GroupError& group) {
  return mode_label(group.mode, group.apart);
}

double fit_objective(const std::vector<GroupError>& groups) {
  double sum = 0;
  int counted = 0;
  for (const GroupError& g : groups) {
    if (g.apart != SetApart::kNo) continue;
    sum += (g.ttft_capped + g.tpot_capped) / 2;
    ++counted;
  }
  return counted == 0 ? 0.0 : sum / counted;
}

void print_point_table(std::FILE* out, const std::vector<E2ePoint>& points, const std::vector<size_t>& which,
                       const std::vector<std::string>& layouts, const std::vector<SimPrediction>& before,
                       const std::vector<SimPrediction>& after) {
  std::fprintf(out, "%5s %-26s %-7s %-24s %5s %5s %5s | %10s %9s", "line", "model", "mode", "layout", "conc",
               "isl", "osl", "ttft_ms", "tpot_ms");
  std::fprintf(out, " | %10s %6s %9s %6s %6s", "pred_ttft", "ratio", "pred_tpot", "ratio", "e2e");
  if (!after.empty())
    std::fprintf(out, " | %10s %6s %9s %6s %6s", "fit_ttft", "ratio", "fit_tpot", "ratio", "e2e");
  std::fprintf(out, "\n");
  for (size_t k = 0; k < which.size(); ++k) {
    const E2ePoint& e = points[which[k]];
    const std::string mode = mode_label(e.mode, set_apart(e));
    std::fprintf(out, "%5lld %-26s %-7s %-24s %5d %5lld %5lld | %10.1f %9.2f", static_cast<long long>(e.line),
                 model_label(e.model_path).c_str(), mode.c_str(), layouts[which[k]].c_str(), e.concurrency,
                 static_cast<long long>(e.isl), static_cast<long long>(e.osl), e.ttft_ms, e.tpot_ms);
    print_prediction(out, before[k], e);
    if (!after.empty()) print_prediction(out, after[k], e);
    std::fprintf(out, "\n");
  }
}

void print_group_table(std::FILE* out, const std::vector<GroupError>& before,
                       const std::vector<GroupError>& after) {
  const bool by_layout =
      std::any_of(before.begin(), before.end(), [](const GroupError& g) { return !g.layout.empty(); });
  std::fprintf(out, "%-26s %-7s ", "model", "mode");
  if (by_layout) std::fprintf(out, "%-24s ", "layout");
  std::fprintf(out, "%6s %6s | %9s %9s %8s", "points", "failed", "TTFT_MAPE", "TPOT_MAPE", "E2E_MAPE");
  if (!after.empty()) std::fprintf(out, " | %9s %9s %8s", "fit_TTFT", "fit_TPOT", "fit_E2E");
  std::fprintf(out, "\n");
  for (size_t i = 0; i < before.size(); ++i) {
    const GroupError& g = before[i];
    std::fprintf(out, "%-26s %-7s ", g.model.c_str(), group_mode(g).c_str());
    if (by_layout) std::fprintf(out, "%-24s ", g.layout.c_str());
    std::fprintf(out, "%6d %6d | %9s %9s %8s", g.points, g.failed, pct(g.ttft_mape).c_str(),
                 pct(g.tpot_mape).c_str(), pct(g.e2e_mape).c_str());
    if (i < after.size())
      std::fprintf(out, " | %9s %9s %8s", pct(after[i].ttft_mape).c_str(), pct(after[i].tpot_mape).c_str(),
                   pct(after[i].e2e_mape).c_str());
    std::fprintf(out, "\n");
  }
  if (by_layout) return;  // the per-model table above it carried the notes
  const auto any = [&](SetApart why) {
    return std::any_of(before.begin(), before.end(), [&](const GroupError& g) { return g.apart == why; });
  };
  if (any(SetApart::kDeploymentUnrecorded))
    std::fprintf(
        out,
        "disagg?: rows that leave prefill_num_workers / decode_num_workers empty - the deployment is not "
        "recorded (aiconfigurator's own predictor refuses them); simulated as 1 prefill and 1 decode "
        "worker, reported apart and left out of fits and of the objective\n");
  if (any(SetApart::kPrefillOverloaded))
    std::fprintf(out,
                 "agg!: rows whose measured request rate needs more than %.1fx the prefill the instance has "
                 "at the pricing's kernel speeds (the prefill load above; prompts most likely repeated and "
                 "served from a prefix cache); reported apart and left out of fits and of the objective "
                 "(--keep-overloaded counts them)\n",
                 kMaxPrefillLoad);
}

void print_client_from_source(std::FILE* out, const std::vector<E2ePoint>& points) {
  const auto n =
      std::count_if(points.begin(), points.end(), [](const E2ePoint& p) { return p.client_from_source; });
  if (n == 0) return;
  std::fprintf(
      out,
      "tokenline calibrate: %lld of %zu rows measured by InferenceX's client (their silicon_data_source): "
      "10 x C prompts, lengths drawn in [0.8 L, L], a 2 x C warm-up first where measured after "
      "2026-01-21T17:53Z (none before); the columns warmup_per_client, requests_per_client and "
      "length_range_ratio say otherwise\n",
      static_cast<long long>(n), points.size());
}

void print_failures(std::FILE* out, const std::string& points_path, const std::vector<E2ePoint>& points,
                    const std::vector<size_t>& which, const std::vector<SimPrediction>& predictions,
                    const char* pass) {
  for (size_t k = 0; k < which.size() && k < predictions.size(); ++k) {
    if (predictions[k].ok) continue;
    const E2ePoint& p = points[which[k]];
    std::fprintf(out, "tokenline calibrate: %s:%lld (%s) failed %s: %s\n", points_path.c_str(),
                 static_cast<long long>(p.line), model_label(p.model_path).c_str(), pass,
                 predictions[k].error.empty() ? "no reason recorded" : predictions[k].error.c_str());
  }
}

}  // namespace tokenline
