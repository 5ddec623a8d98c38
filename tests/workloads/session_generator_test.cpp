#include "workloads/session_generator.h"

#include <catch2/catch.hpp>
#include <vector>

#include "common/input_error.h"

namespace tokenline {
namespace {

std::vector<SessionScript> all(const std::string& spec, uint64_t seed) {
  SessionGenerator g(parse_session_generator_spec(spec), seed);
  std::vector<SessionScript> out;
  while (std::optional<SessionScript> s = g.next()) out.push_back(std::move(*s));
  return out;
}

bool same(const std::vector<SessionScript>& a, const std::vector<SessionScript>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].start_s != b[i].start_s || a[i].prefix_group != b[i].prefix_group ||
        a[i].turns.size() != b[i].turns.size())
      return false;
    for (size_t k = 0; k < a[i].turns.size(); ++k) {
      const SessionTurn &x = a[i].turns[k], &y = b[i].turns[k];
      if (x.new_tokens != y.new_tokens || x.output_tokens != y.output_tokens || x.think_s != y.think_s)
        return false;
    }
  }
  return true;
}

TEST_CASE("session generator: keys set counts, lengths and think times", "[session_generator]") {
  const auto s =
      all("sessions=3,turns=fixed:4,first=fixed:900,new=fixed:50,output=fixed:20,think=fixed:2.5,"
          "prefix_groups=1,prefix_tokens=128",
          1);
  REQUIRE(s.size() == 3);
  for (const SessionScript& x : s) {
    CHECK(x.start_s == 0);  // no rate: every session may start at once, the clients pace them
    CHECK(x.prefix_group == 0);
    CHECK(x.prefix_tokens == 128);
    REQUIRE(x.turns.size() == 4);
    CHECK(x.turns[0].new_tokens == 900);
    CHECK(x.turns[0].think_s == 0);
    CHECK(x.turns[3].new_tokens == 50);
    CHECK(x.turns[3].output_tokens == 20);
    CHECK(x.turns[3].think_s == 2.5);
  }
}

TEST_CASE("session generator: the same seed gives the same sessions, another seed others",
          "[session_generator]") {
  const std::string spec =
      "sessions=20,turns=uniform:1:6,new=lognormal:mean=300,sigma=0.8,think=exp:4,rate=2";
  CHECK(same(all(spec, 5), all(spec, 5)));
  CHECK_FALSE(same(all(spec, 5), all(spec, 6)));
  CHECK(same(all(spec + ",seed=9", 5), all(spec + ",seed=9", 6)));  // seed= wins over the run's seed
  const auto s = all(spec, 5);
  for (size_t i = 1; i < s.size(); ++i) CHECK(s[i].start_s >= s[i - 1].start_s);
  CHECK(s.back().start_s > 0);
}

TEST_CASE("session generator: a bad key or value names it", "[session_generator]") {
  CHECK_THROWS_WITH(parse_session_generator_spec("sesions=3"),
                    Catch::Contains("synthetic-sessions: sesions"));
  CHECK_THROWS_WITH(parse_session_generator_spec("think=gamma:3"),
                    Catch::Contains("synthetic-sessions: think: expected exp:MEAN"));
  CHECK_THROWS_WITH(parse_session_generator_spec("think=uniform:5:2"), Catch::Contains("A <= B"));
  CHECK_THROWS_WITH(parse_session_generator_spec("sessions=0"),
                    Catch::Contains("synthetic-sessions: sessions"));
  CHECK_THROWS_WITH(parse_session_generator_spec("prefix_groups=2"), Catch::Contains("prefix_tokens"));
  CHECK_THROWS_WITH(parse_session_generator_spec("rate=1,rate=2"), Catch::Contains("each key once"));
}

TEST_CASE("session generator: think-time draws have the asked mean", "[session_generator]") {
  for (const std::string think : {"exp:4", "uniform:2:6", "lognormal:mean=4,sigma=0.5", "fixed:4"}) {
    const auto s = all("sessions=400,turns=fixed:10,think=" + think, 3);
    double sum = 0;
    int64_t n = 0;
    for (const SessionScript& x : s)
      for (size_t k = 1; k < x.turns.size(); ++k) {
        sum += x.turns[k].think_s;
        ++n;
      }
    INFO(think);
    CHECK(sum / static_cast<double>(n) == Approx(4.0).epsilon(0.05));  // 3,600 draws
  }
}

// A day-shaped curve of session starts (rate_low + day_s): the starts per quarter of the day follow
// rate(t) = LO + (HI - LO) (1 - cos(2 pi t / D)) / 2, whose mean over the first quarter is
// LO + (HI - LO) (1/2 - 1/pi) and over the second and third LO + (HI - LO) (1/2 + 1/pi).
TEST_CASE("session generator: a day-shaped rate curve of session starts", "[session_generator]") {
  const double lo = 2, hi = 20, day = 4000;
  const auto s = all("sessions=50000,turns=fixed:1,rate=20,rate_low=2,day_s=4000", 5);
  std::vector<double> quarter(4, 0.0);
  for (const SessionScript& x : s)
    if (x.start_s < day) quarter[static_cast<size_t>(x.start_s / (day / 4))] += 1;
  const double pi = 3.141592653589793;
  const double low_mean = lo + (hi - lo) * (0.5 - 1 / pi);
  const double high_mean = lo + (hi - lo) * (0.5 + 1 / pi);
  CHECK(quarter[0] / (day / 4) == Approx(low_mean).epsilon(0.06));   // ~6,300 starts
  CHECK(quarter[1] / (day / 4) == Approx(high_mean).epsilon(0.06));  // ~16,700 starts
  CHECK(quarter[2] / (day / 4) == Approx(high_mean).epsilon(0.06));
  CHECK(same(s, all("sessions=50000,turns=fixed:1,rate=20,rate_low=2,day_s=4000", 5)));
  CHECK_THROWS_WITH(parse_session_generator_spec("rate=5,day_s=100"),
                    Catch::Contains("synthetic-sessions: day_s"));
  CHECK_THROWS_WITH(parse_session_generator_spec("rate=5,rate_low=9,day_s=100"),
                    Catch::Contains("synthetic-sessions: rate_low"));
}

}  // namespace
}  // namespace tokenline
