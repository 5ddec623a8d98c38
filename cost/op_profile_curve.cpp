// OpCurve / OpGrid evaluation: binary search over a few dozen measured points, no allocation.
#include "cost/op_profile_curve.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tokenline {

namespace {

// Beyond the last measured point the op keeps the efficiency it was measured at there: its latency grows
// as its roofline does (roof / roof_last), never below the last latency. A roofline that is zero at the last
// point has no efficiency to keep: its value is added.
double beyond(double t_last, double roof, double roof_last) {
  if (roof_last <= 0) return t_last + std::max(0.0, roof);
  return t_last * std::max(1.0, roof / roof_last);
}

}  // namespace

double OpRoofline::at(double b, double x) const {
  const double compute = c0 + cb * b + cx * x + cbx * b * x + cbxx * b * x * x;
  const double memory = m0 + mb * b + mx * x + mbx * b * x + mbxx * b * x * x;
  return std::max(compute, memory);
}

double OpCurve::search(double x) const {
  if (const size_t n = whole_slot(x); n > 0) return whole[n - 1] = interpolate(x);
  return interpolate(x);
}

double OpCurve::interpolate(double x) const {
  if (xs.empty()) return 0;
  if (x <= xs.front()) return ts.front();
  if (x >= xs.back()) return beyond(ts.back(), roof.at(b, x), roof.at(b, xs.back()));
  const size_t hi = size_t(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  return between(hi, std::log(x / xs[hi - 1]) / log_spans[hi - 1]);
}

void OpCurve::tabulate(int64_t up_to, double unit_size) {
  whole.clear();
  unit = unit_size;
  if (xs.empty() || unit <= 0) return;
  whole.assign(size_t(std::max<int64_t>(0, up_to)), std::numeric_limits<double>::quiet_NaN());
}

void OpGrid::add_row(OpCurve row) {
  if (!rows.empty()) {
    const std::vector<double>& a = rows.back().xs;
    const std::vector<double>& c = row.xs;
    size_t n = 0;
    while (n < a.size() && n < c.size() && a[n] == c[n]) ++n;
    shared_.push_back(n);
    log_spans_.push_back(std::log(row.b / bs.back()));
  }
  bs.push_back(row.b);
  rows.push_back(std::move(row));
}

void OpGrid::tabulate(int64_t up_to) {
  for (OpCurve& row : rows) row.tabulate(up_to);
}

double OpGrid::at(double b, double x) const {
  if (bs.empty()) return 0;
  if (b <= bs.front()) return rows.front().at(x);
  if (b >= bs.back()) {
    const OpCurve& last = rows.back();
    return beyond(last.at(x), last.roof.at(b, x), last.roof.at(bs.back(), x));
  }
  const size_t hi = size_t(std::upper_bound(bs.begin(), bs.end(), b) - bs.begin());
  const size_t lo = hi - 1;
  const double u = std::log(b / bs[lo]) / log_spans_[lo];
  const OpCurve& r_lo = rows[lo];
  const OpCurve& r_hi = rows[hi];
  double t_lo, t_hi;
  const size_t n = shared_[lo];
  if (n >= 2 && x > r_lo.xs.front() && x < r_lo.xs[n - 1]) {
    const auto first = r_lo.xs.begin();
    const size_t k = size_t(std::upper_bound(first, first + std::ptrdiff_t(n), x) - first);
    const double v = std::log(x / r_lo.xs[k - 1]) / r_lo.log_spans[k - 1];
    t_lo = r_lo.between(k, v);
    t_hi = r_hi.between(k, v);
  } else {
    t_lo = r_lo.at(x);
    t_hi = r_hi.at(x);
  }
  return t_lo + u * (t_hi - t_lo);
}

OpCurve make_curve(std::vector<std::pair<double, double>> points, double b, const OpRoofline& roof,
                   const OpRoofline& measured) {
  OpCurve c;
  c.b = b;
  c.roof = roof;
  std::sort(points.begin(), points.end());
  for (size_t i = 0; i < points.size();) {
    size_t j = i;
    double sum = 0;
    for (; j < points.size() && points[j].first == points[i].first; ++j) sum += points[j].second;
    const double x = points[i].first, t = sum / double(j - i);
    const double ref = measured.at(b, x);
    c.xs.push_back(x);
    c.ts.push_back(ref > 0 ? t * roof.at(b, x) / ref : t);
    i = j;
  }
  for (size_t k = 0; k + 1 < c.xs.size(); ++k) c.log_spans.push_back(std::log(c.xs[k + 1] / c.xs[k]));
  return c;
}

}  // namespace tokenline
