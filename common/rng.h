// Rng: one named, seeded pcg64 stream plus our own distribution code (no std::*_distribution, whose
// output is implementation-defined). Same (seed, stream name) => the same sequence on every platform.
// Owned by one user; not thread-safe. Every sampler consumes a fixed or documented number of draws.
#pragma once

#include <cstdint>
#include <pcg_random.hpp>
#include <string_view>
#include <vector>

namespace tokenline {

// FNV-1a 64-bit hash of a stream name; stable across platforms and builds.
uint64_t stream_id(std::string_view name);

class Rng {
 public:
  // The stream is pcg64's sequence selector, derived from the name, so "arrivals" and "lengths" are
  // independent streams under one seed.
  Rng(uint64_t seed, std::string_view stream);

  uint64_t next_u64();
  double uniform01();                           // [0, 1) from the top 53 bits; one draw
  double uniform01_open();                      // (0, 1]; for logarithms
  int64_t uniform_int(int64_t lo, int64_t hi);  // [lo, hi] inclusive, unbiased (rejection); REQUIRES lo <= hi
  double exponential(double mean);              // inverse CDF; one draw
  double normal();                              // standard normal, Marsaglia polar method (no cached pair)
  double gamma(double shape, double scale);     // Marsaglia-Tsang; shape < 1 via the U^(1/shape) boost
  double lognormal(double mu, double sigma);    // exp(mu + sigma * normal())

 private:
  pcg64 engine_;
};

// Zipf over {1, ..., n}: P(k) proportional to k^-s. Inverse-CDF table (n doubles), binary search per
// draw; REQUIRES 1 <= n <= kMaxZipfSupport, s > 0.
class ZipfTable {
 public:
  static constexpr int64_t kMaxZipfSupport = int64_t{1} << 24;  // 16M entries = 128 MiB of doubles at most
  ZipfTable(int64_t n, double s);
  int64_t sample(Rng& rng) const;  // one draw
  double mean() const;             // exact mean of the table's distribution

 private:
  std::vector<double> cdf_;  // cdf_[k-1] = P(X <= k)
  double mean_ = 0;
};

}  // namespace tokenline
