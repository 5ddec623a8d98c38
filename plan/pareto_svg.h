// pareto.svg: throughput per GPU (y) against tokens/s per user (x) for the candidates that meet the SLO,
// the Pareto frontier (no other point is better on both axes) drawn as a line with its points labelled.
// Written by hand (no plotting library): a fixed-size SVG any browser shows.
#pragma once

#include <string>
#include <vector>

namespace tokenline {

struct ParetoPoint {
  double tokens_per_user = 0;     // x, tokens/s
  double throughput_per_gpu = 0;  // y, output tokens/s per GPU
  std::string label;              // e.g. "#3 2x dp8-ep8"
};

// Indexes of the frontier points, by tokens_per_user ascending (ties: the higher throughput).
std::vector<size_t> pareto_frontier(const std::vector<ParetoPoint>& points);

// The whole SVG document; `title` goes on top; with no points it says "no configuration meets the SLO".
std::string pareto_svg(const std::vector<ParetoPoint>& points, const std::string& title);

}  // namespace tokenline
