// LengthDistribution: token counts for synthetic workloads (closed set: fixed, uniform, lognormal, zipf),
// drawn from a caller's Rng. Every draw is an integer >= 1. Immutable after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/rng.h"

namespace tokenline {

enum class LengthKind { kFixed, kUniform, kLognormal, kZipf };

struct LengthParams {
  LengthKind kind = LengthKind::kFixed;
  int64_t fixed = 1;           // kFixed
  int64_t lo = 1, hi = 1;      // kUniform: [lo, hi]
  double mean = 1, sigma = 0;  // kLognormal: mean of the distribution (not mu) and sigma of log
  double s = 1;                // kZipf exponent: P(k) ~ k^-s on {1..max}
  int64_t max = 0;             // kLognormal: clamp (0 = none); kZipf: support size (required)
};

class LengthDistribution {
 public:
  explicit LengthDistribution(const LengthParams& p);
  // Parses "fixed:1024", "uniform:128:4096", "lognormal:mean=2000,sigma=1[,max=N]", "zipf:s=1.2,max=4096".
  // `where` names the spec field in InputError messages.
  static LengthDistribution parse(std::string_view text, const std::string& where);

  int64_t sample(Rng& rng) const;
  double mean() const;  // the distribution's mean before rounding and clamping (exact for fixed/uniform/zipf)
  const LengthParams& params() const { return params_; }

 private:
  LengthParams params_;
  std::shared_ptr<const ZipfTable> zipf_;  // shared: copies of a distribution share one table
};

}  // namespace tokenline
