#include "workloads/synthetic_generator.h"

#include <algorithm>
#include <utility>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "workloads/block_hash.h"

namespace tokenline {

SyntheticGenerator::SyntheticGenerator(SyntheticSpec spec, uint64_t default_seed)
    : spec_(std::move(spec)),
      arrivals_(spec_.seed.value_or(default_seed), "arrivals"),
      input_(spec_.seed.value_or(default_seed), "input_tokens"),
      output_(spec_.seed.value_or(default_seed), "output_tokens"),
      groups_(spec_.seed.value_or(default_seed), "prefix_group"),
      total_(spec_.request_count()) {}

double SyntheticGenerator::next_gap_s() {
  switch (spec_.arrival) {
    case ArrivalKind::kPoisson:
      return arrivals_.exponential(1.0 / spec_.rate);
    case ArrivalKind::kGamma: {
      // shape k = 1/cv^2, scale = cv^2/rate: mean k * scale = 1/rate, cv = 1/sqrt(k)
      const double cv2 = spec_.arrival_cv * spec_.arrival_cv;
      return arrivals_.gamma(1.0 / cv2, cv2 / spec_.rate);
    }
  }
  return 0;
}

int64_t SyntheticGenerator::draw_group() {
  return spec_.prefix_groups > 0 ? groups_.uniform_int(0, spec_.prefix_groups - 1) : -1;
}

std::optional<WorkloadRequest> SyntheticGenerator::next() {
  if (emitted_ >= total_) return std::nullopt;
  const double arrival_s = next_arrival_s_;
  // A tiny rate puts arrivals past the end of int64 nanosecond time: refused here, so the generator keeps
  // the WorkloadSource contract (arrivals within limits::kMaxArrivalS) on its own.
  if (!(arrival_s <= limits::kMaxArrivalS))
    throw InputError("synthetic:" + spec_.text + ": request " + std::to_string(emitted_) + " arrival",
                     "a time <= " + number_text(limits::kMaxArrivalS) +
                         " s (int64 nanoseconds of virtual time; rate sets the gaps)",
                     number_text(arrival_s) + " s");
  const int64_t group = draw_group();
  next_arrival_s_ += next_gap_s();
  const int64_t prefix = group >= 0 ? spec_.prefix_tokens : 0;
  const int64_t fresh_tokens = spec_.input.sample(input_);
  const int64_t output_tokens = spec_.output.sample(output_);
  // Each term is bounded before the sum (prefix <= the limit), so it cannot wrap.
  constexpr int64_t kMost = limits::kMaxRequestTokens;
  if (fresh_tokens > kMost || output_tokens > kMost || prefix + fresh_tokens > kMost) {
    throw InputError("synthetic:" + spec_.text + ": request " + std::to_string(emitted_),
                     "prompts and outputs of at most " + std::to_string(kMost) + " tokens",
                     std::to_string(prefix + std::min(fresh_tokens, kMost)) + "-token prompt, " +
                         std::to_string(output_tokens) + "-token output");
  }
  return make_request(arrival_s, group, prefix + fresh_tokens, output_tokens);
}

WorkloadRequest SyntheticGenerator::make_request(double arrival_s, int64_t group, int64_t input_tokens,
                                                 int64_t output_tokens) {
  WorkloadRequest r;
  r.id = emitted_++;
  r.arrival_s = arrival_s;
  r.input_tokens = input_tokens;
  r.output_tokens = output_tokens;
  r.block_tokens = spec_.block_tokens;
  const int64_t b = spec_.block_tokens;
  const int64_t blocks = (input_tokens + b - 1) / b;
  r.block_hashes.reserve(static_cast<size_t>(blocks));
  for (int64_t j = 0; j < blocks; ++j) {
    const bool full = (j + 1) * b <= input_tokens;
    const uint64_t block = static_cast<uint64_t>(j);
    if (full && group >= 0 && (j + 1) * b <= spec_.prefix_tokens)
      r.block_hashes.push_back(block_hash(BlockOwner::kPrefixGroup, static_cast<uint64_t>(group), block));
    else
      r.block_hashes.push_back(block_hash(BlockOwner::kRequest, static_cast<uint64_t>(r.id), block));
  }
  return r;
}

}  // namespace tokenline
