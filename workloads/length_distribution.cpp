#include "workloads/length_distribution.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "common/input_error.h"

namespace tokenline {
namespace {

constexpr std::string_view kForms =
    "fixed:N | uniform:A:B | lognormal:mean=M,sigma=S[,max=N] | zipf:s=S,max=N";

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

int64_t to_int(std::string_view v, const std::string& where, int64_t min) {
  int64_t x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || ptr != v.data() + v.size() || x < min)
    throw InputError(where, "an integer >= " + std::to_string(min), "'" + std::string(v) + "'");
  return x;
}

// A finite number > 0 (or >= 0 when zero_ok).
double to_double(std::string_view v, const std::string& where, bool zero_ok) {
  double x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  const bool in_range = zero_ok ? x >= 0 : x > 0;
  if (ec != std::errc() || ptr != v.data() + v.size() || !std::isfinite(x) || !in_range)
    throw InputError(where, zero_ok ? "a number >= 0" : "a number > 0", "'" + std::string(v) + "'");
  return x;
}

// "mean=2000,sigma=1" -> fills the named fields; every name must be allowed and present once.
void parse_named(std::string_view args, const std::string& where, LengthParams& p, bool zipf) {
  bool seen_mean = false, seen_sigma = false, seen_s = false, seen_max = false;
  for (std::string_view item : split(args, ',')) {
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    const std::string at = where + "." + std::string(key);
    if (!zipf && key == "mean") {
      p.mean = to_double(value, at, false);
      seen_mean = true;
    } else if (!zipf && key == "sigma") {
      p.sigma = to_double(value, at, true);
      seen_sigma = true;
    } else if (zipf && key == "s") {
      p.s = to_double(value, at, false);
      seen_s = true;
    } else if (key == "max") {
      p.max = to_int(value, at, 1);
      seen_max = true;
    } else
      throw InputError(where, std::string(kForms), "'" + std::string(item) + "'");
  }
  if (!zipf && !(seen_mean && seen_sigma))
    throw InputError(where, "lognormal:mean=M,sigma=S", "'" + std::string(args) + "'");
  if (zipf && !(seen_s && seen_max)) throw InputError(where, "zipf:s=S,max=N", "'" + std::string(args) + "'");
  if (zipf && p.max > ZipfTable::kMaxZipfSupport)
    throw InputError(where + ".max", "at most " + std::to_string(ZipfTable::kMaxZipfSupport),
                     std::to_string(p.max));
}

}  // namespace

LengthDistribution::LengthDistribution(const LengthParams& p) : params_(p) {
  if (p.kind == LengthKind::kZipf) zipf_ = std::make_shared<const ZipfTable>(p.max, p.s);
}

LengthDistribution LengthDistribution::parse(std::string_view text, const std::string& where) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view args = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  LengthParams p;
  if (kind == "fixed") {
    p.kind = LengthKind::kFixed;
    p.fixed = to_int(args, where, 1);
  } else if (kind == "uniform") {
    const std::vector<std::string_view> ab = split(args, ':');
    if (ab.size() != 2) throw InputError(where, "uniform:A:B", "'" + std::string(text) + "'");
    p.kind = LengthKind::kUniform;
    p.lo = to_int(ab[0], where, 1);
    p.hi = to_int(ab[1], where, p.lo);
  } else if (kind == "lognormal" || kind == "zipf") {
    p.kind = kind == "zipf" ? LengthKind::kZipf : LengthKind::kLognormal;
    parse_named(args, where, p, p.kind == LengthKind::kZipf);
  } else {
    throw InputError(where, std::string(kForms), "'" + std::string(text) + "'");
  }
  return LengthDistribution(p);
}

int64_t LengthDistribution::sample(Rng& rng) const {
  switch (params_.kind) {
    case LengthKind::kFixed:
      return params_.fixed;
    case LengthKind::kUniform:
      return rng.uniform_int(params_.lo, params_.hi);
    case LengthKind::kLognormal: {
      // mean = exp(mu + sigma^2 / 2)  =>  mu = ln(mean) - sigma^2 / 2
      const double mu = std::log(params_.mean) - 0.5 * params_.sigma * params_.sigma;
      constexpr double kNoClamp = 1e15;  // far above any context length; keeps the cast below defined
      const double hi = params_.max > 0 ? static_cast<double>(params_.max) : kNoClamp;
      return static_cast<int64_t>(std::clamp(std::round(rng.lognormal(mu, params_.sigma)), 1.0, hi));
    }
    case LengthKind::kZipf:
      return zipf_->sample(rng);
  }
  return 1;
}

double LengthDistribution::mean() const {
  switch (params_.kind) {
    case LengthKind::kFixed:
      return static_cast<double>(params_.fixed);
    case LengthKind::kUniform:
      return 0.5 * static_cast<double>(params_.lo + params_.hi);
    case LengthKind::kLognormal:
      return params_.mean;
    case LengthKind::kZipf:
      return zipf_->mean();
  }
  return 0;
}

}  // namespace tokenline
