#include "workloads/session_generator.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "common/number_text.h"
#include "workloads/spec_items.h"

namespace tokenline {
namespace {

constexpr std::array<std::string_view, 13> kKeys = {
    "sessions", "turns", "first",         "new",           "output", "think",       "rate",
    "rate_low", "day_s", "prefix_groups", "prefix_tokens", "seed",   "block_tokens"};
constexpr int64_t kMaxSessions = 10'000'000;  // sessions x turns stays within limits::kMaxSyntheticRequests

std::string where_of(std::string_view key) {
  return "synthetic-sessions: " + std::string(key);
}

// Keys whose values may contain commas (length distributions): "lognormal:mean=2000,sigma=1".
constexpr std::array<std::string_view, 5> kCommaKeys = {"turns", "first", "new", "output", "think"};

double to_number(std::string_view v, const std::string& where, double min) {
  double x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || ptr != v.data() + v.size() || !std::isfinite(x) || x < min ||
      x > limits::kMaxArrivalS)
    throw InputError(where,
                     "a number in [" + number_text(min) + ", " + number_text(limits::kMaxArrivalS) + "]",
                     "'" + std::string(v) + "'");
  return x;
}

int64_t to_int(const std::string& v, std::string_view key, int64_t min, int64_t max) {
  int64_t x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || ptr != v.data() + v.size() || x < min || x > max)
    throw InputError(where_of(key),
                     "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                     "'" + v + "'");
  return x;
}

ThinkTime parse_think(const std::string& v) {
  const std::string where = where_of("think");
  const std::string expected = "exp:MEAN | fixed:S | uniform:A:B | lognormal:mean=M,sigma=S (seconds)";
  const size_t colon = v.find(':');
  const std::string kind = v.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : v.substr(colon + 1);
  ThinkTime t;
  if (kind == "exp" && !rest.empty()) {
    t = {ThinkKind::kExponential, to_number(rest, where, 0)};
  } else if (kind == "fixed" && !rest.empty()) {
    t = {ThinkKind::kFixed, to_number(rest, where, 0)};
  } else if (kind == "uniform" && rest.find(':') != std::string::npos) {
    const size_t c = rest.find(':');
    t = {ThinkKind::kUniform, to_number(rest.substr(0, c), where, 0),
         to_number(rest.substr(c + 1), where, 0)};
    if (t.b < t.a) throw InputError(where, "uniform:A:B with A <= B", "'" + v + "'");
  } else if (kind == "lognormal" && rest.rfind("mean=", 0) == 0 &&
             rest.find(",sigma=") != std::string::npos) {
    const size_t c = rest.find(",sigma=");
    t = {ThinkKind::kLognormal, to_number(rest.substr(5, c - 5), where, 0),
         to_number(rest.substr(c + 7), where, 0)};
  } else {
    throw InputError(where, expected, "'" + v + "'");
  }
  return t;
}

void apply(const std::string& key, const std::string& v, SessionGeneratorSpec& s) {
  if (key == "sessions")
    s.sessions = to_int(v, key, 1, kMaxSessions);
  else if (key == "turns")
    s.turns = LengthDistribution::parse(v, where_of(key));
  else if (key == "first")
    s.first = LengthDistribution::parse(v, where_of(key));
  else if (key == "new")
    s.new_tokens = LengthDistribution::parse(v, where_of(key));
  else if (key == "output")
    s.output = LengthDistribution::parse(v, where_of(key));
  else if (key == "think")
    s.think = parse_think(v);
  else if (key == "rate")
    s.rate = to_number(v, where_of(key), 0);
  else if (key == "rate_low")
    s.rate_low = to_number(v, where_of(key), 0);
  else if (key == "day_s")
    s.day_s = to_number(v, where_of(key), 0);
  else if (key == "prefix_groups")
    s.prefix_groups = to_int(v, key, 0, limits::kMaxSyntheticRequests);
  else if (key == "prefix_tokens")
    s.prefix_tokens = to_int(v, key, 0, limits::kMaxRequestTokens);
  else if (key == "seed")
    s.seed = static_cast<uint64_t>(to_int(v, key, 0, INT64_MAX));
  else if (key == "block_tokens")
    throw InputError(where_of(key),
                     "no block_tokens: session prompts are hashed in " + std::to_string(kSessionBlockTokens) +
                         "-token blocks",
                     "block_tokens=" + v);
}

}  // namespace

double ThinkTime::sample(Rng& rng) const {
  switch (kind) {
    case ThinkKind::kExponential:
      return a > 0 ? rng.exponential(a) : 0.0;
    case ThinkKind::kFixed:
      return a;
    case ThinkKind::kUniform:
      return a + (b - a) * rng.uniform01();
    case ThinkKind::kLognormal: {
      if (a <= 0) return 0.0;
      const double mu = std::log(a) - 0.5 * b * b;  // so that the distribution's mean is a
      return rng.lognormal(mu, b);
    }
  }
  return 0.0;
}

SessionGeneratorSpec parse_session_generator_spec(std::string_view text) {
  SessionGeneratorSpec s;
  s.text = std::string(text);
  if (text.empty()) return s;
  for (const auto& [key, value] : split_spec_items(text, "synthetic-sessions", kKeys, kCommaKeys))
    apply(key, value, s);
  if ((s.prefix_groups > 0) != (s.prefix_tokens > 0))
    throw InputError(where_of("prefix_tokens"), "prefix_groups and prefix_tokens both > 0 or both absent",
                     "prefix_groups=" + std::to_string(s.prefix_groups) +
                         ", prefix_tokens=" + std::to_string(s.prefix_tokens));
  if ((s.day_s > 0) != (s.rate_low >= 0))
    throw InputError(where_of("day_s"),
                     "day_s=S and rate_low=R together (a day-shaped rate curve) or neither", s.text);
  if (s.day_s > 0 && !(s.rate > 0 && s.rate_low <= s.rate))
    throw InputError(where_of("rate_low"), "a trough rate in [0, rate] with a peak rate > 0",
                     "rate_low=" + number_text(s.rate_low) + ", rate=" + number_text(s.rate));
  return s;
}

double SessionGeneratorSpec::rate_at(double t_s) const {
  if (day_s <= 0) return rate;
  constexpr double kTwoPi = 6.283185307179586;
  return rate_low + (rate - rate_low) * (1.0 - std::cos(kTwoPi * t_s / day_s)) / 2.0;
}

SessionGenerator::SessionGenerator(SessionGeneratorSpec spec, uint64_t default_seed)
    : spec_(std::move(spec)),
      starts_(spec_.seed.value_or(default_seed), "session_starts"),
      turns_(spec_.seed.value_or(default_seed), "session_turns"),
      first_(spec_.seed.value_or(default_seed), "session_first"),
      new_(spec_.seed.value_or(default_seed), "session_new"),
      output_(spec_.seed.value_or(default_seed), "session_output"),
      think_(spec_.seed.value_or(default_seed), "session_think"),
      prefix_(spec_.seed.value_or(default_seed), "session_prefix") {}

std::optional<SessionScript> SessionGenerator::next() {
  if (made_ >= spec_.sessions) return std::nullopt;
  SessionScript s;
  s.index = made_++;
  s.name = std::to_string(s.index);
  s.start_s = next_start_s_;
  if (spec_.day_s > 0) {
    // The day's curve by thinning (Lewis and Shedler, 1979): candidates at the peak rate, each kept with
    // probability r(t) / rate. The bound keeps a trough of rate 0 from looping without end.
    constexpr int kMaxCandidates = 1'000'000;
    for (int i = 0; i < kMaxCandidates; ++i) {
      next_start_s_ += starts_.exponential(1.0 / spec_.rate);
      if (!(next_start_s_ <= limits::kMaxArrivalS)) break;
      if (starts_.uniform01() * spec_.rate <= spec_.rate_at(next_start_s_)) break;
    }
  } else if (spec_.rate > 0) {
    next_start_s_ += starts_.exponential(1.0 / spec_.rate);
  }
  if (!(s.start_s <= limits::kMaxArrivalS))
    throw InputError(describe() + ": session " + s.name + " start",
                     "a time <= " + number_text(limits::kMaxArrivalS) + " s (rate sets the gaps)",
                     number_text(s.start_s) + " s");
  if (spec_.prefix_groups > 0) {
    s.prefix_group = prefix_.uniform_int(0, spec_.prefix_groups - 1);
    s.prefix_tokens = spec_.prefix_tokens;
  }
  const int64_t turns = std::min(spec_.turns.sample(turns_), limits::kMaxTurns);
  int64_t history = s.prefix_tokens;
  for (int64_t k = 0; k < turns; ++k) {
    SessionTurn t;
    t.new_tokens = k == 0 && spec_.first ? spec_.first->sample(first_) : spec_.new_tokens.sample(new_);
    t.output_tokens = spec_.output.sample(output_);
    t.think_s = k == 0 ? 0.0 : spec_.think.sample(think_);
    if (history + t.new_tokens > limits::kMaxRequestTokens)
      throw InputError(describe() + ": session " + s.name + " turn " + std::to_string(k),
                       "prompts of at most " + std::to_string(limits::kMaxRequestTokens) +
                           " tokens (a turn's prompt carries the session's history)",
                       std::to_string(history + t.new_tokens) + " tokens");
    history += t.new_tokens + t.output_tokens;
    s.turns.push_back(t);
  }
  return s;
}

}  // namespace tokenline
