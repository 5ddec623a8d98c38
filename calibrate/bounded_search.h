// Deterministic bounded minimisation for calibration: golden-section search on one interval, and
// coordinate descent that runs it on each coordinate in turn. No randomness; the same objective gives the
// same evaluations in the same order. The objective need not be smooth (it comes from simulations);
// golden-section finds a local minimum of a unimodal function, and coordinate descent a point no single
// coordinate improves on within the tolerance.
#pragma once

#include <functional>
#include <vector>

namespace tokenline {

struct SearchBounds {
  double lower = 0;
  double upper = 0;
  bool log_scale = false;  // search in log(x); REQUIRES: lower > 0
};

struct SearchOptions {
  double tolerance = 0.02;  // stop when the bracket is this fraction of the (log) interval
  int sweeps = 2;           // coordinate descent passes over all coordinates
};

// The x in [lower, upper] minimising f, to options.tolerance of the interval; never evaluates f outside
// the bounds. The starting x is kept unless a probe is strictly better, so ties keep the start.
double golden_section_minimize(const std::function<double(double)>& f, const SearchBounds& bounds,
                               double start, const SearchOptions& options);

// Minimises f over the box, one coordinate at a time from `start` (clamped into the bounds).
// REQUIRES: start.size() == bounds.size().
std::vector<double> coordinate_descent(const std::function<double(const std::vector<double>&)>& f,
                                       const std::vector<SearchBounds>& bounds, std::vector<double> start,
                                       const SearchOptions& options);

}  // namespace tokenline
