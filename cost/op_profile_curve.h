// Interpolation of measured op latencies: 1-D curves (tokens, message bytes) and 2-D grids (batch x context),
// log-space between measured points; beyond them the last one's efficiency, the latency growing as the op's
// own roofline does. Built once per CostModel; evaluation allocates nothing. A step prices a few hundred
// points: each curve keeps the log of each span between two measured points, and a curve of tokens may
// remember its value at every whole token count up to a bound (tabulate), so most lookups are one load.
// Remembering writes inside a const curve: a CostModel is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tokenline {

// An op's roofline time as a function of a batch b and a size x: max(compute, memory), each a polynomial
// with the terms ops need (GEMM: x = tokens, b = 1; decode attention: b = sequences, x = context;
// prefill attention: the b*x^2 causal term).
struct OpRoofline {
  double c0 = 0, cb = 0, cx = 0, cbx = 0, cbxx = 0;  // compute seconds
  double m0 = 0, mb = 0, mx = 0, mbx = 0, mbxx = 0;  // memory (or link) seconds
  double at(double b, double x) const;
};

// Latency by one size x at a fixed batch b (seconds). Empty: the op is not covered.
struct OpCurve {
  double b = 1;
  std::vector<double> xs;             // measured sizes, strictly ascending, > 0
  std::vector<double> ts;             // latency at xs (seconds)
  OpRoofline roof;                    // growth beyond the last point
  std::vector<double> log_spans;      // log(xs[i + 1] / xs[i]) (make_curve)
  mutable std::vector<double> whole;  // at(n x unit) for n = 1 .. whole.size(), NaN until first asked
  double unit = 1;
  bool empty() const { return xs.empty(); }
  // Exact at xs; linear in log x between two points (so monotone between them); below xs[0] the first
  // latency (kernels have a floor); above the last point, last x max(1, roof(x) / roof(last)).
  double at(double x) const {  // inline: a remembered value is a compare and a load
    if (const std::size_t n = whole_slot(x); n > 0 && whole[n - 1] == whole[n - 1])  // NaN: not yet
      return whole[n - 1];
    return search(x);
  }
  // Remembers at(n x unit) for every whole n in 1 .. up_to (a size in whole tokens of `unit` each: 1 for
  // token counts, the bytes per token of a message) once at() has computed it: later calls at exactly such
  // a multiple return it without a search or a log, the same value. Costs one fill of up_to doubles, so a
  // cost model made for a few steps (plan's pruning, a short probe) pays nothing per entry it never asks.
  void tabulate(int64_t up_to, double unit = 1);

 private:
  friend struct OpGrid;
  // n when x is n x unit for a whole n in 1 .. whole.size(), else 0.
  std::size_t whole_slot(double x) const {
    if (whole.empty()) return 0;
    const double q = unit == 1 ? x : x / unit;  // token curves: no division
    if (!(q >= 1 && q < double(whole.size()) + 1)) return 0;
    const auto n = static_cast<std::size_t>(q);  // floor(q): q is at least 1
    return double(n) * unit == x ? n : 0;
  }
  double search(double x) const;  // at() without a remembered value: computes it (and remembers it)
  double interpolate(double x) const;
  // The value between xs[hi - 1] and xs[hi] at weight u (interpolate's last step).
  double between(std::size_t hi, double u) const { return ts[hi - 1] + u * (ts[hi] - ts[hi - 1]); }
};

// Latency by batch and size: one curve per measured batch (each with its own sizes: grids may be ragged).
// Built row by row (add_row), which also keeps what at() would otherwise recompute on every call.
struct OpGrid {
  std::vector<double> bs;     // measured batches, strictly ascending
  std::vector<OpCurve> rows;  // rows[i].b == bs[i]
  bool empty() const { return bs.empty(); }
  // Appends the row of batch row.b. REQUIRES row.b above every batch already added.
  void add_row(OpCurve row);
  // Linear in log b between the two rows around b (each evaluated at x); below bs[0] the first row; above
  // the last row, last(x) x max(1, roof(b, x) / roof(last b, x)).
  double at(double b, double x) const;
  // Every row remembers whole sizes up to up_to (OpCurve::tabulate): for grids asked at whole sizes.
  void tabulate(int64_t up_to);

 private:
  std::vector<double> log_spans_;  // log(bs[i + 1] / bs[i])
  // shared_[i]: how many leading sizes rows i and i + 1 have in common. Where x falls inside them, both
  // rows interpolate in the same span with the same weight: one search and one log serve the two.
  std::vector<std::size_t> shared_;
};

// Builds a curve from (x, seconds) points in any order; duplicate x are averaged. `roof` describes the
// wanted shape; `measured` the shape the points were measured on: each point is scaled by
// roof(x) / measured(x), so a measured shape (roof == measured) stays exact.
OpCurve make_curve(std::vector<std::pair<double, double>> points, double b, const OpRoofline& roof,
                   const OpRoofline& measured);

}  // namespace tokenline
