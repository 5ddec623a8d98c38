#include "plan/pareto_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace tokenline {
namespace {

constexpr double kWidth = 720, kHeight = 480;                       // px
constexpr double kLeft = 80, kRight = 30, kTop = 40, kBottom = 60;  // margins for the axes' labels
constexpr int kTicks = 5;

std::string fmt(const char* format, double v) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '&')
      out += "&amp;";
    else if (ch == '<')
      out += "&lt;";
    else if (ch == '>')
      out += "&gt;";
    else
      out += ch;
  }
  return out;
}

// A round axis maximum at or above `v` (1, 2 or 5 times a power of ten).
double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

struct Frame {
  double x_max, y_max;
  double x(double v) const { return kLeft + v / x_max * (kWidth - kLeft - kRight); }
  double y(double v) const { return kHeight - kBottom - v / y_max * (kHeight - kTop - kBottom); }
};

std::string axes(const Frame& f) {
  std::string s;
  const double x0 = kLeft, y0 = kHeight - kBottom;
  s += "<line x1='" + fmt("%.1f", x0) + "' y1='" + fmt("%.1f", y0) + "' x2='" + fmt("%.1f", kWidth - kRight) +
       "' y2='" + fmt("%.1f", y0) + "' stroke='black'/>\n";
  s += "<line x1='" + fmt("%.1f", x0) + "' y1='" + fmt("%.1f", y0) + "' x2='" + fmt("%.1f", x0) + "' y2='" +
       fmt("%.1f", kTop) + "' stroke='black'/>\n";
  for (int i = 0; i <= kTicks; ++i) {
    const double xv = f.x_max * i / kTicks, yv = f.y_max * i / kTicks;
    s += "<text x='" + fmt("%.1f", f.x(xv)) + "' y='" + fmt("%.1f", y0 + 18) + "' text-anchor='middle'>" +
         fmt("%g", xv) + "</text>\n";
    s += "<text x='" + fmt("%.1f", x0 - 6) + "' y='" + fmt("%.1f", f.y(yv) + 4) + "' text-anchor='end'>" +
         fmt("%g", yv) + "</text>\n";
  }
  s += "<text x='" + fmt("%.1f", (kLeft + kWidth - kRight) / 2) + "' y='" + fmt("%.1f", kHeight - 15) +
       "' text-anchor='middle'>tokens/s per user (1000 / mean TPOT ms)</text>\n";
  s += "<text transform='translate(20," + fmt("%.1f", (kTop + kHeight - kBottom) / 2) +
       ") rotate(-90)' text-anchor='middle'>output tokens/s per GPU</text>\n";
  return s;
}

}  // namespace

std::vector<size_t> pareto_frontier(const std::vector<ParetoPoint>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Walk from the fastest per user down; a point is on the frontier when it beats every faster one.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].tokens_per_user != points[b].tokens_per_user)
      return points[a].tokens_per_user > points[b].tokens_per_user;
    if (points[a].throughput_per_gpu != points[b].throughput_per_gpu)
      return points[a].throughput_per_gpu > points[b].throughput_per_gpu;
    return a < b;
  });
  std::vector<size_t> frontier;
  double best_y = -1;
  for (size_t i : order) {
    if (points[i].throughput_per_gpu > best_y) {
      frontier.push_back(i);
      best_y = points[i].throughput_per_gpu;
    }
  }
  std::reverse(frontier.begin(), frontier.end());
  return frontier;
}

std::string pareto_svg(const std::vector<ParetoPoint>& points, const std::string& title) {
  Frame f{1, 1};
  for (const ParetoPoint& p : points) {
    f.x_max = std::max(f.x_max, p.tokens_per_user);
    f.y_max = std::max(f.y_max, p.throughput_per_gpu);
  }
  f.x_max = nice_max(f.x_max);
  f.y_max = nice_max(f.y_max);
  std::string s = "<svg xmlns='http://www.w3.org/2000/svg' width='" + fmt("%.0f", kWidth) + "' height='" +
                  fmt("%.0f", kHeight) + "' font-family='sans-serif' font-size='12'>\n";
  s += "<rect width='100%' height='100%' fill='white'/>\n";
  s += "<text x='" + fmt("%.1f", kWidth / 2) + "' y='22' text-anchor='middle' font-size='14'>" +
       escaped(title) + "</text>\n";
  s += axes(f);
  if (points.empty()) {
    s += "<text x='" + fmt("%.1f", kWidth / 2) + "' y='" + fmt("%.1f", kHeight / 2) +
         "' text-anchor='middle'>no configuration meets the SLO</text>\n";
  }
  for (const ParetoPoint& p : points) {
    s += "<circle cx='" + fmt("%.1f", f.x(p.tokens_per_user)) + "' cy='" +
         fmt("%.1f", f.y(p.throughput_per_gpu)) + "' r='3' fill='#8899aa'><title>" + escaped(p.label) +
         "</title></circle>\n";
  }
  const std::vector<size_t> frontier = pareto_frontier(points);
  std::string path;
  for (size_t i : frontier) {
    path += fmt("%.1f", f.x(points[i].tokens_per_user)) + "," +
            fmt("%.1f", f.y(points[i].throughput_per_gpu)) + " ";
  }
  if (!frontier.empty())
    s += "<polyline points='" + path + "' fill='none' stroke='#c0392b' stroke-width='2'/>\n";
  for (size_t i : frontier) {
    const double cx = f.x(points[i].tokens_per_user), cy = f.y(points[i].throughput_per_gpu);
    s += "<circle cx='" + fmt("%.1f", cx) + "' cy='" + fmt("%.1f", cy) + "' r='5' fill='#c0392b'/>\n";
    s += "<text x='" + fmt("%.1f", cx + 7) + "' y='" + fmt("%.1f", cy - 7) + "' font-size='10'>" +
         escaped(points[i].label) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace tokenline
