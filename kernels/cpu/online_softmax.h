// OnlineSoftmax: the single-pass softmax the CPU attention kernels (mla_attention, gqa_attention) accumulate
// in double. Scores arrive one at a time; a new maximum rescales the weights accumulated under the old one,
// so each cached token is read once and nothing grows with the context.
#pragma once

#include <cmath>
#include <limits>
#include <span>

namespace tokenline {

struct OnlineSoftmax {
  double max_score = -std::numeric_limits<double>::infinity();
  double denom = 0.0;

  // Takes the next score: rescales acc (the weighted values so far) when it is a new maximum, adds its
  // weight to denom and returns that weight, exp(score - max_score), for the caller's values.
  double add(double score, std::span<double> acc) {
    if (score > max_score) {
      const double correction = std::exp(max_score - score);
      denom *= correction;
      for (double& a : acc) a *= correction;
      max_score = score;
    }
    const double w = std::exp(score - max_score);
    denom += w;
    return w;
  }
};

}  // namespace tokenline
