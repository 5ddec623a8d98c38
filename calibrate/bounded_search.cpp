#include "calibrate/bounded_search.h"

#include <algorithm>
#include <cmath>

namespace tokenline {
namespace {

constexpr double kInvPhi = 0.6180339887498949;  // 1 / golden ratio = (sqrt(5) - 1) / 2

double to_search(double x, const SearchBounds& b) {
  return b.log_scale ? std::log(x) : x;
}
double from_search(double u, const SearchBounds& b) {
  return b.log_scale ? std::exp(u) : u;
}

}  // namespace

double golden_section_minimize(const std::function<double(double)>& f, const SearchBounds& bounds,
                               double start, const SearchOptions& options) {
  const double lo0 = to_search(bounds.lower, bounds);
  const double hi0 = to_search(bounds.upper, bounds);
  const auto eval = [&](double u) {
    return f(std::clamp(from_search(u, bounds), bounds.lower, bounds.upper));
  };
  double best_x = std::clamp(start, bounds.lower, bounds.upper);
  double best_f = f(best_x);
  double a = lo0, b = hi0;
  double c = b - kInvPhi * (b - a), d = a + kInvPhi * (b - a);
  double fc = eval(c), fd = eval(d);
  const double stop = options.tolerance * (hi0 - lo0);
  while (b - a > stop) {
    if (fc <= fd) {
      b = d, d = c, fd = fc;
      c = b - kInvPhi * (b - a);
      fc = eval(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + kInvPhi * (b - a);
      fd = eval(d);
    }
  }
  const double u = fc <= fd ? c : d;
  const double fu = std::min(fc, fd);
  return fu < best_f ? std::clamp(from_search(u, bounds), bounds.lower, bounds.upper) : best_x;
}

std::vector<double> coordinate_descent(const std::function<double(const std::vector<double>&)>& f,
                                       const std::vector<SearchBounds>& bounds, std::vector<double> x,
                                       const SearchOptions& options) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::clamp(x[i], bounds[i].lower, bounds[i].upper);
  for (int sweep = 0; sweep < options.sweeps; ++sweep) {
    for (size_t i = 0; i < x.size(); ++i) {
      const auto along = [&](double v) {
        std::vector<double> y = x;
        y[i] = v;
        return f(y);
      };
      x[i] = golden_section_minimize(along, bounds[i], x[i], options);
    }
  }
  return x;
}

}  // namespace tokenline
