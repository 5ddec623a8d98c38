#include "common/rng.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace tokenline {

uint64_t stream_id(std::string_view name) {
  constexpr uint64_t kFnvOffset = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
  constexpr uint64_t kFnvPrime = 1099511628211ULL;          // FNV-1a 64-bit prime
  uint64_t h = kFnvOffset;
  for (unsigned char c : name) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

Rng::Rng(uint64_t seed, std::string_view stream) : engine_(seed, stream_id(stream)) {}

uint64_t Rng::next_u64() {
  return static_cast<uint64_t>(engine_());
}

double Rng::uniform01() {
  constexpr double kTwoPowMinus53 = 1.0 / 9007199254740992.0;  // 2^-53: 53 bits fill a double's mantissa
  return static_cast<double>(next_u64() >> 11) * kTwoPowMinus53;
}

double Rng::uniform01_open() {
  return 1.0 - uniform01();
}

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  assert(lo <= hi && "uniform_int needs lo <= hi");
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (range == UINT64_MAX) return static_cast<int64_t>(next_u64());
  const uint64_t span = range + 1;
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % span + 1) % span;  // largest multiple of span, minus 1
  uint64_t x = next_u64();
  while (x > limit) x = next_u64();
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % span);
}

double Rng::exponential(double mean) {
  return -mean * std::log(uniform01_open());
}

double Rng::normal() {
  for (;;) {
    const double u = 2.0 * uniform01() - 1.0;
    const double v = 2.0 * uniform01() - 1.0;
    const double s = u * u + v * v;
    if (s > 0 && s < 1) return u * std::sqrt(-2.0 * std::log(s) / s);
  }
}

double Rng::gamma(double shape, double scale) {
  assert(shape > 0 && scale > 0 && "gamma needs shape > 0 and scale > 0");
  if (shape < 1) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a) (Marsaglia & Tsang 2000, section 6).
    const double g = gamma(shape + 1.0, 1.0);
    return scale * g * std::pow(uniform01_open(), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform01_open();
    if (u < 1.0 - 0.0331 * x * x * x * x) return scale * d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return scale * d * v;
  }
}

double Rng::lognormal(double mu, double sigma) {
  return std::exp(mu + sigma * normal());
}

ZipfTable::ZipfTable(int64_t n, double s) {
  assert(n >= 1 && n <= kMaxZipfSupport && s > 0 && "ZipfTable needs 1 <= n <= 2^24 and s > 0");
  cdf_.resize(static_cast<size_t>(n));
  double total = 0;
  double weighted = 0;
  for (int64_t k = 1; k <= n; ++k) {
    const double p = std::pow(static_cast<double>(k), -s);
    total += p;
    weighted += p * static_cast<double>(k);
    cdf_[static_cast<size_t>(k - 1)] = total;
  }
  for (double& c : cdf_) c /= total;
  cdf_.back() = 1.0;
  mean_ = weighted / total;
}

int64_t ZipfTable::sample(Rng& rng) const {
  const double u = rng.uniform01();
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  return static_cast<int64_t>(it - cdf_.begin()) + 1;
}

double ZipfTable::mean() const {
  return mean_;
}

}  // namespace tokenline
