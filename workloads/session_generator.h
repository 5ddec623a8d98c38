// SessionGenerator: synthetic multi-turn sessions from a `synthetic-sessions:` spec, e.g.
//   synthetic-sessions:sessions=64,turns=uniform:2:8,first=lognormal:mean=2000,sigma=0.5,new=fixed:200,
//                      output=fixed:150,think=exp:5,prefix_groups=2,prefix_tokens=1024,seed=7
// Keys (all optional): sessions (count, default 100), turns (turns per session, a length distribution,
// default fixed:4, at most limits::kMaxTurns), first (turn 0's new tokens, default: new's), new (later
// turns' new tokens, default fixed:256), output (default fixed:128), think (think/tool time before each
// later turn: exp:MEAN | fixed:S | uniform:A:B | lognormal:mean=M,sigma=S; default exp:5), rate (session
// starts per second, Poisson; default: every session may start at 0, the client count paces them),
// rate_low + day_s (together: a day-shaped curve of session starts, rate(t) = rate_low + (rate - rate_low)
// (1 - cos(2 pi t / day_s)) / 2, trough at 0, peak `rate` at day_s / 2, drawn by thinning a Poisson
// process at `rate` on the same stream),
// prefix_groups + prefix_tokens (each session opens with one of G shared prefixes, drawn uniformly),
// seed. Length distributions as in length_distribution.h; a value with commas continues until the next
// key. Streams (common/rng.h): "session_starts", "session_turns", "session_first", "session_new",
// "session_output", "session_think", "session_prefix" - so a key's draws do not move another's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/rng.h"
#include "workloads/length_distribution.h"
#include "workloads/session_source.h"

namespace tokenline {

enum class ThinkKind { kExponential, kFixed, kUniform, kLognormal };

struct ThinkTime {
  ThinkKind kind = ThinkKind::kExponential;
  double a = 5.0;  // exp: mean; fixed: value; uniform: low; lognormal: mean
  double b = 0.0;  // uniform: high; lognormal: sigma of log
  double sample(Rng& rng) const;
};

struct SessionGeneratorSpec {
  int64_t sessions = 100;
  LengthDistribution turns = LengthDistribution(LengthParams{.kind = LengthKind::kFixed, .fixed = 4});
  std::optional<LengthDistribution> first;  // absent: new's
  LengthDistribution new_tokens = LengthDistribution(LengthParams{.kind = LengthKind::kFixed, .fixed = 256});
  LengthDistribution output = LengthDistribution(LengthParams{.kind = LengthKind::kFixed, .fixed = 128});
  ThinkTime think;
  double rate = 0;                   // session starts per second (with day_s: the peak); 0: all at 0
  double rate_low = -1;              // with day_s: the trough's rate (-1: not given)
  double day_s = 0;                  // > 0: the rate curve's period (a day, time-scaled)
  double rate_at(double t_s) const;  // session starts per second at t_s
  int64_t prefix_groups = 0;
  int64_t prefix_tokens = 0;
  std::optional<uint64_t> seed;
  std::string text;  // as given, for describe()
};

// Parses the part after "synthetic-sessions:". Throws InputError("synthetic-sessions: <key>", ...).
SessionGeneratorSpec parse_session_generator_spec(std::string_view text);

class SessionGenerator final : public SessionSource {
 public:
  SessionGenerator(SessionGeneratorSpec spec, uint64_t default_seed);
  std::optional<SessionScript> next() override;
  std::string describe() const override { return "synthetic-sessions:" + spec_.text; }

 private:
  SessionGeneratorSpec spec_;
  Rng starts_, turns_, first_, new_, output_, think_, prefix_;
  int64_t made_ = 0;
  double next_start_s_ = 0;
};

}  // namespace tokenline
