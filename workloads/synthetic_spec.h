// SyntheticSpec: the parsed form of a `synthetic:` workload string, e.g.
//   synthetic:n=1000,rate=5,arrival=gamma:cv=2,input=lognormal:mean=2000,sigma=1,output=uniform:64:512,
//             prefix_groups=8,prefix_tokens=2048,seed=42
// Keys (all optional; defaults in the struct): n, rate, arrival (poisson | gamma:cv=C), input, output
// (length distributions, length_distribution.h), prefix_groups, prefix_tokens, block_tokens, seed. A
// comma-separated item that is not a key=value item continues the previous value when that is input or
// output (so "lognormal:mean=2000,sigma=1" stays one value); an unknown key is an error naming it.
// Multi-turn sessions are `synthetic-sessions:` (workloads/session_generator.h: each turn sent after the
// last answer plus a think time): the keys sessions, turns and think_s of earlier versions, which sent
// turns at fixed times, are refused with a message pointing there. Limits: n <=
// limits::kMaxSyntheticRequests; the generator refuses prompts above limits::kMaxRequestTokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "workloads/length_distribution.h"

namespace tokenline {

enum class ArrivalKind { kPoisson, kGamma };

struct SyntheticSpec {
  std::optional<int64_t> n;  // total requests; default 100
  double rate = 1.0;         // requests/s
  ArrivalKind arrival = ArrivalKind::kPoisson;
  double arrival_cv = 1.0;  // gamma: coefficient of variation of inter-arrival times
  LengthDistribution input = LengthDistribution(LengthParams{.kind = LengthKind::kFixed, .fixed = 1024});
  LengthDistribution output = LengthDistribution(LengthParams{.kind = LengthKind::kFixed, .fixed = 128});
  int64_t prefix_groups = 0;     // > 0: every request starts with one of this many shared prefixes
  int64_t prefix_tokens = 0;     // length of each shared prefix
  int32_t block_tokens = 512;    // tokens per hashed block (Mooncake's 512)
  std::optional<uint64_t> seed;  // absent: the caller's default seed
  std::string text;              // the spec as given, for describe()

  int64_t request_count() const;  // n, or its default
};

// Parses the part after "synthetic:". Throws InputError("synthetic: <key>", expected, found).
SyntheticSpec parse_synthetic_spec(std::string_view text);

}  // namespace tokenline
