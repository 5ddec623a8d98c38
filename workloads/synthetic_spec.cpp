#include "workloads/synthetic_spec.h"

#include <array>
#include <charconv>
#include <cmath>
#include <vector>

#include "common/input_error.h"
#include "common/input_limits.h"
#include "workloads/spec_items.h"

namespace tokenline {
namespace {

constexpr std::array<std::string_view, 12> kKeys = {"n",      "rate",          "arrival",       "input",
                                                    "output", "prefix_groups", "prefix_tokens", "sessions",
                                                    "turns",  "think_s",       "block_tokens",  "seed"};
constexpr int64_t kDefaultRequests = 100;  // a quick run when no n is given

std::string where_of(std::string_view key) {
  return "synthetic: " + std::string(key);
}

// Keys whose values may contain commas (length distributions): "lognormal:mean=2000,sigma=1".
constexpr std::array<std::string_view, 2> kCommaKeys = {"input", "output"};

int64_t to_int(const std::string& v, std::string_view key, int64_t min) {
  int64_t x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || ptr != v.data() + v.size() || x < min)
    throw InputError(where_of(key), "an integer >= " + std::to_string(min), "'" + v + "'");
  return x;
}

double to_positive(const std::string& v, std::string_view key) {
  double x = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || ptr != v.data() + v.size() || !std::isfinite(x) || x <= 0)
    throw InputError(where_of(key), "a number > 0", "'" + v + "'");
  return x;
}

int64_t to_block_tokens(const std::string& v) {
  constexpr int64_t kMaxBlockTokens = int64_t{1} << 20;  // far above any KV page size; keeps int32 safe
  const int64_t b = to_int(v, "block_tokens", 1);
  if (b > kMaxBlockTokens) throw InputError(where_of("block_tokens"), "at most 1048576", "'" + v + "'");
  return b;
}

void parse_arrival(const std::string& v, SyntheticSpec& s) {
  const std::string prefix = "gamma:cv=";
  if (v == "poisson") {
    s.arrival = ArrivalKind::kPoisson;
  } else if (v.compare(0, prefix.size(), prefix) == 0) {
    s.arrival = ArrivalKind::kGamma;
    s.arrival_cv = to_positive(v.substr(prefix.size()), "arrival.cv");
  } else {
    throw InputError(where_of("arrival"), "poisson | gamma:cv=C", "'" + v + "'");
  }
}

void apply(const std::string& key, const std::string& v, SyntheticSpec& s) {
  if (key == "n")
    s.n = to_int(v, key, 1);
  else if (key == "rate")
    s.rate = to_positive(v, key);
  else if (key == "arrival")
    parse_arrival(v, s);
  else if (key == "input")
    s.input = LengthDistribution::parse(v, where_of(key));
  else if (key == "output")
    s.output = LengthDistribution::parse(v, where_of(key));
  else if (key == "prefix_groups")
    s.prefix_groups = to_int(v, key, 0);
  else if (key == "prefix_tokens")
    s.prefix_tokens = to_int(v, key, 0);
  else if (key == "sessions" || key == "turns" || key == "think_s")
    throw InputError(where_of(key),
                     "synthetic-sessions:sessions=N,turns=fixed:T,think=exp:S,... for multi-turn sessions "
                     "(each turn sent after the last answer plus a think time; docs/sessions-and-routing.md)",
                     key + "=" + v + " in synthetic:");
  else if (key == "block_tokens")
    s.block_tokens = static_cast<int32_t>(to_block_tokens(v));
  else if (key == "seed")
    s.seed = static_cast<uint64_t>(to_int(v, key, 0));
}

// The explicit bounds (common/input_limits.h).
void check_limits(const SyntheticSpec& s) {
  if (s.prefix_tokens > limits::kMaxRequestTokens)
    throw InputError(where_of("prefix_tokens"), "at most " + std::to_string(limits::kMaxRequestTokens),
                     std::to_string(s.prefix_tokens));
  const int64_t most = limits::kMaxSyntheticRequests;
  if (s.n && *s.n > most)
    throw InputError(where_of("n"), "at most " + std::to_string(most) + " requests", std::to_string(*s.n));
}

}  // namespace

int64_t SyntheticSpec::request_count() const {
  return n.value_or(kDefaultRequests);
}

SyntheticSpec parse_synthetic_spec(std::string_view text) {
  SyntheticSpec s;
  s.text = std::string(text);
  if (text.empty()) return s;
  for (const auto& [key, value] : split_spec_items(text, "synthetic", kKeys, kCommaKeys))
    apply(key, value, s);
  if ((s.prefix_groups > 0) != (s.prefix_tokens > 0))
    throw InputError(where_of("prefix_tokens"), "prefix_groups and prefix_tokens both > 0 or both absent",
                     "prefix_groups=" + std::to_string(s.prefix_groups) +
                         ", prefix_tokens=" + std::to_string(s.prefix_tokens));
  check_limits(s);
  return s;
}

}  // namespace tokenline
