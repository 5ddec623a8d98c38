#include "workloads/length_distribution.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "common/input_error.h"

namespace tokenline {
namespace {

constexpr int kSamples = 100000;

double sample_mean(const LengthDistribution& d, Rng& rng, int64_t& lo, int64_t& hi) {
  double sum = 0;
  lo = INT64_MAX;
  hi = 0;
  for (int i = 0; i < kSamples; ++i) {
    const int64_t x = d.sample(rng);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += static_cast<double>(x);
  }
  return sum / kSamples;
}

TEST_CASE("length distributions parse and sample around their means", "[lengths]") {
  Rng rng(9, "lengths");
  int64_t lo = 0, hi = 0;

  const auto fixed = LengthDistribution::parse("fixed:1024", "input");
  CHECK(sample_mean(fixed, rng, lo, hi) == 1024);

  const auto uniform = LengthDistribution::parse("uniform:128:4096", "input");
  const double uniform_sd = (4096 - 128 + 1) / std::sqrt(12.0);
  CHECK(sample_mean(uniform, rng, lo, hi) ==
        Approx(uniform.mean()).margin(5 * uniform_sd / std::sqrt(kSamples)));
  CHECK(lo == 128);
  CHECK(hi == 4096);

  // sigma 0.5: rounding and the >= 1 clamp move the mean by far less than the tolerance.
  const auto lognormal = LengthDistribution::parse("lognormal:mean=2000,sigma=0.5", "input");
  const double ln_sd = 2000 * std::sqrt(std::exp(0.25) - 1);
  CHECK(sample_mean(lognormal, rng, lo, hi) == Approx(2000).margin(5 * ln_sd / std::sqrt(kSamples)));

  const auto capped = LengthDistribution::parse("lognormal:mean=2000,sigma=1,max=3000", "input");
  sample_mean(capped, rng, lo, hi);
  CHECK(hi == 3000);
  CHECK(lo >= 1);

  const auto zipf = LengthDistribution::parse("zipf:s=1.1,max=8192", "output");
  CHECK(sample_mean(zipf, rng, lo, hi) == Approx(zipf.mean()).epsilon(0.05));
  CHECK(lo == 1);
  CHECK(hi <= 8192);
}

TEST_CASE("bad length specs say which forms exist", "[lengths]") {
  auto err = [](const std::string& text) {
    try {
      LengthDistribution::parse(text, "synthetic: input");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err("normal:5") ==
        "synthetic: input: expected fixed:N | uniform:A:B | lognormal:mean=M,sigma=S[,max=N] | "
        "zipf:s=S,max=N, found 'normal:5'");
  CHECK(err("fixed:0") == "synthetic: input: expected an integer >= 1, found '0'");
  CHECK(err("uniform:500:100") == "synthetic: input: expected an integer >= 500, found '100'");
  CHECK(err("lognormal:mean=2000") ==
        "synthetic: input: expected lognormal:mean=M,sigma=S, found 'mean=2000'");
  CHECK(err("lognormal:mean=-1,sigma=1") == "synthetic: input.mean: expected a number > 0, found '-1'");
  CHECK(err("zipf:s=1.1") == "synthetic: input: expected zipf:s=S,max=N, found 's=1.1'");
  CHECK(err("zipf:s=1.1,max=999999999") ==
        "synthetic: input.max: expected at most 16777216, found 999999999");
}

}  // namespace
}  // namespace tokenline
