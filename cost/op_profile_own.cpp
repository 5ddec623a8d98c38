// The ops table of an own profile (`tokenline profile`): the engine's own per-op step times, measured on
// its kernels for one model and layout, priced op by op. Decode rows: `batch` sequences each attending to
// `tokens` keys; prefill rows: `batch` sequences of `tokens` new tokens each, no prefix. Between rows the
// curves of op_profile_curve interpolate; beyond them each op's fitted linear model (least squares over
// its rows: decode c0 + c1 b + c2 b x, prefill c0 + c1 b x + c2 b x^2) adds its slope.
#include "cost/op_profile_own.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "common/input_error.h"
#include "cost/op_profile_pricing.h"

namespace tokenline {
namespace {

constexpr double kMsToS = 1e-3;
constexpr int kOpColumn = 0, kPhaseColumn = 1;                          // text columns
constexpr int kBatchColumn = 0, kTokensColumn = 1, kLatencyColumn = 2;  // numeric columns
constexpr int kFitTerms = 3;

struct Point {
  double b, x, s;
};

// The three features of a point: decode 1, b, b x; prefill 1, b x, b x^2.
std::array<double, kFitTerms> features(const Point& p, bool decode) {
  if (decode) return {1, p.b, p.b * p.x};
  return {1, p.b * p.x, p.b * p.x * p.x};
}

// Least squares over the features `use` keeps (normal equations with a tiny ridge, so a feature the
// points do not vary gets ~0 rather than a singular system).
std::array<double, kFitTerms> solve(const std::vector<Point>& pts, bool decode,
                                    const std::array<bool, kFitTerms>& use) {
  constexpr double kRidge = 1e-12;  // relative to each feature's scale: enough to keep the system regular
  std::array<std::array<double, kFitTerms + 1>, kFitTerms> a{};
  for (const Point& p : pts) {
    const auto f = features(p, decode);
    for (int i = 0; i < kFitTerms; ++i) {
      for (int j = 0; j < kFitTerms; ++j) a[i][j] += use[i] && use[j] ? f[i] * f[j] : 0;
      a[i][kFitTerms] += use[i] ? f[i] * p.s : 0;
    }
  }
  for (int i = 0; i < kFitTerms; ++i) a[i][i] = use[i] ? a[i][i] * (1 + kRidge) + 1e-300 : 1;
  for (int col = 0; col < kFitTerms; ++col) {
    int piv = col;
    for (int r = col + 1; r < kFitTerms; ++r)
      if (std::abs(a[r][col]) > std::abs(a[piv][col])) piv = r;
    std::swap(a[col], a[piv]);
    for (int r = 0; r < kFitTerms; ++r) {
      if (r == col) continue;
      const double k = a[r][col] / a[col][col];
      for (int j = col; j <= kFitTerms; ++j) a[r][j] -= k * a[col][j];
    }
  }
  std::array<double, kFitTerms> c{};
  for (int i = 0; i < kFitTerms; ++i) c[i] = a[i][kFitTerms] / a[i][i];
  return c;
}

// Non-negative least squares by elimination: a feature whose coefficient comes out negative is dropped
// and the rest refitted (a time never shrinks as work grows).
std::array<double, kFitTerms> fit(const std::vector<Point>& pts, bool decode) {
  std::array<bool, kFitTerms> use{true, true, true};
  for (int round = 0; round < kFitTerms; ++round) {
    std::array<double, kFitTerms> c = solve(pts, decode, use);
    int worst = -1;
    for (int i = 0; i < kFitTerms; ++i)
      if (use[i] && c[i] < 0 && (worst < 0 || c[i] < c[worst])) worst = i;
    if (worst < 0) {
      for (int i = 0; i < kFitTerms; ++i) c[i] = use[i] ? c[i] : 0;
      return c;
    }
    use[size_t(worst)] = false;
  }
  return {};
}

OpRoofline roof_of(const std::array<double, kFitTerms>& c, bool decode) {
  OpRoofline r;
  r.c0 = c[0];
  if (decode) {
    r.cb = c[1];
    r.cbx = c[2];
  } else {
    r.cbx = c[1];
    r.cbxx = c[2];
  }
  return r;
}

OpGrid grid_of(const std::vector<Point>& pts, const OpRoofline& roof) {
  std::vector<double> bs;
  for (const Point& p : pts)
    if (std::find(bs.begin(), bs.end(), p.b) == bs.end()) bs.push_back(p.b);
  std::sort(bs.begin(), bs.end());
  OpGrid g;
  for (double b : bs) {
    std::vector<std::pair<double, double>> row;
    for (const Point& p : pts)
      if (p.b == b) row.emplace_back(p.x, p.s);
    g.add_row(make_curve(std::move(row), b, roof, roof));
  }
  return g;
}

// Ops that run on the sampled rows only: in prefill, the chunks that complete a prompt.
bool on_sampled_rows(Op op) {
  return op == Op::kLmHead || op == Op::kVocabAllgather || op == Op::kSample;
}

// One kind of row (every group or alone): per ledger op, its decode and prefill points.
struct PhasePoints {
  std::array<std::vector<Point>, kOpCount> decode, prefill;
};

void resolve_curves(const PhasePoints& pts, ProfileCurves::OwnCurves& c) {
  for (int i = 0; i < kOpCount; ++i) {
    const auto& d = pts.decode[size_t(i)];
    const auto& f = pts.prefill[size_t(i)];
    const OpRoofline droof = d.empty() ? OpRoofline{} : roof_of(fit(d, true), true);
    if (!d.empty()) c.decode[size_t(i)] = grid_of(d, droof);
    if (!f.empty()) {
      const OpRoofline roof = roof_of(fit(f, false), false);
      c.prefill[size_t(i)] = grid_of(f, roof);
      c.pair_s[size_t(i)] = 2 * roof.cbxx;  // b x^2 = two causal pairs per x^2 / 2
      c.fixed_s[size_t(i)] = d.empty() ? 0 : std::min(droof.c0, roof.c0);
    }
  }
}

// Op i's time on one rank from one set of curves: its decode part plus its prefill part.
double op_time_s(const ProfileCurves::OwnCurves& c, const ProfileWork& w, int i) {
  const OpGrid& d = c.decode[size_t(i)];
  const OpGrid& f = c.prefill[size_t(i)];
  const double decode_s = w.decode_seqs > 0 && !d.empty() ? d.at(w.decode_seqs, w.decode_context) : 0;
  double prefill_s = 0;
  const double prefill_sampled = w.lm_tokens - (w.tokens - w.prefill_tokens);
  if (w.prefill_seqs > 0 && !f.empty() && on_sampled_rows(Op(i))) {
    if (prefill_sampled > 0) prefill_s = f.at(prefill_sampled, w.prefill_tokens / w.prefill_seqs);
  } else if (w.prefill_seqs > 0 && !f.empty()) {
    const double x = w.prefill_tokens / w.prefill_seqs;
    prefill_s = f.at(w.prefill_seqs, x) +
                std::max(0.0, w.prefill_keys - w.prefill_seqs * x * (x + 1) / 2) * c.pair_s[size_t(i)];
  }
  // The engine runs each op once over all the step's rows: a step with both parts pays the op's fixed
  // time (weight reads, thread dispatch: its fitted intercept) once, not once per part.
  const double shared_s = std::min({c.fixed_s[size_t(i)], decode_s, prefill_s});
  return decode_s + prefill_s - std::max(0.0, shared_s);
}

void check_measured_on(const OpProfile& p, const CostModel& cm) {
  const std::string label = "--profile " + p.name;
  const std::string how = "; profile it with `tokenline profile --model " + cm.model.name + " --parallel " +
                          cm.parallel.name() + "`";
  if (!p.measured_model.empty() && p.measured_model != cm.model.name)
    throw InputError(label, "model " + p.measured_model + " (what its ops table was measured on)" + how,
                     "model " + cm.model.name);
  if (!p.measured_parallel.empty() && p.measured_parallel != cm.parallel.name())
    throw InputError(label,
                     "layout " + p.measured_parallel +
                         " (what its ops table was measured on; another layout runs other shards and "
                         "collectives)" +
                         how,
                     "layout " + cm.parallel.name());
}

}  // namespace

std::array<double, kOpCount> own_op_scales(const OpProfile& p) {
  std::array<double, kOpCount> scales{};
  scales.fill(p.param(TimingParam::kOpTimeScale));
  for (const auto& [name, scale] : p.op_scales) {
    if (const std::optional<Op> op = find_op(name)) scales[size_t(*op)] = scale;  // the loader checked it
  }
  return scales;
}

void resolve_own_ops(const OpProfile& p, const CostModel& cm, ProfileCurves& pc) {
  const ProfileTable& t = p.table(ProfileTableKind::kOps);
  if (t.empty()) return;
  check_measured_on(p, cm);
  PhasePoints all, alone;
  for (size_t r = 0; r < t.rows(); ++r) {
    const std::string at = t.file + ":" + std::to_string(r + 2);  // the header is line 1
    const std::optional<Op> op = find_op(t.text_at(r, kOpColumn));
    if (!op)
      throw InputError(at + ": column op", "a ledger op name",
                       "'" + std::string(t.text_at(r, kOpColumn)) + "'");
    const std::string_view phase = t.text_at(r, kPhaseColumn);
    const bool lone = phase == "decode-alone" || phase == "prefill-alone";
    if (phase != "decode" && phase != "prefill" && !lone)
      throw InputError(at + ": column phase", "decode, prefill, decode-alone or prefill-alone",
                       "'" + std::string(phase) + "'");
    PhasePoints& into = lone ? alone : all;
    (phase.starts_with("decode") ? into.decode : into.prefill)[size_t(*op)].push_back(
        {t.at(r, kBatchColumn), t.at(r, kTokensColumn), t.at(r, kLatencyColumn) * kMsToS});
  }
  pc.own = true;
  pc.own_scale = own_op_scales(p);
  resolve_curves(all, pc.own_all);
  resolve_curves(alone, pc.own_alone);
}

void price_own_ops(const ProfileCurves& pc, const ProfileWork& w, std::array<Term, kOpCount>& terms) {
  // Under DP the attention groups share the machine's cores: while its peers idle a group runs faster.
  // Its time lies between the alone rows and the every-group rows, by how much of it its peers' work
  // overlaps (peer_load).
  const double all_weight = w.peer_load < 0 ? 1 : std::clamp(w.peer_load, 0.0, 1.0);
  for (int i = 0; i < kOpCount; ++i) {
    double s = op_time_s(pc.own_all, w, i);
    const bool alone = !pc.own_alone.decode[size_t(i)].empty() || !pc.own_alone.prefill[size_t(i)].empty();
    if (all_weight < 1 && alone) s = all_weight * s + (1 - all_weight) * op_time_s(pc.own_alone, w, i);
    // An op with no rows is one the engine did not run at this layout (the table lists every op it ran).
    Term& t = terms[size_t(i)];
    t.time_s = pc.own_scale[size_t(i)] * s;
    t.launch_s = 0;
    t.source = TermSource::kProfile;
  }
}

double own_rank_time_s(const ProfileCurves& pc, const ProfileWork& w) {
  double s = 0;
  for (int i = 0; i < kOpCount; ++i) s += pc.own_scale[size_t(i)] * op_time_s(pc.own_all, w, i);
  return s;
}

double own_peer_load(std::span<const double> rank_s, size_t r, int groups) {
  if (groups < 2 || r >= rank_s.size() || !(rank_s[r] > 0)) return 1;
  double load = 0;
  for (size_t q = 0; q < rank_s.size(); ++q)
    if (q != r) load += std::min(1.0, rank_s[q] / rank_s[r]);
  return load / double(groups - 1);  // ranks beyond rank_s idle
}

}  // namespace tokenline
