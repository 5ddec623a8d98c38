// OpCurve / OpGrid: exact at measured points, monotone between them, the last point's efficiency beyond, and
// unmeasured shapes scaled by the ratio of two rooflines.
#include "cost/op_profile_curve.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <utility>
#include <vector>

namespace tokenline {
namespace {

OpRoofline linear_roof(double s_per_x) {
  OpRoofline r;
  r.cx = s_per_x;
  return r;
}

}  // namespace

TEST_CASE("op curve is exact at measured points, monotone between, its roofline's growth beyond",
          "[op_profile]") {
  const OpRoofline roof = linear_roof(1e-6);
  const OpCurve c = make_curve({{16, 9e-6}, {1, 2e-6}, {4, 3e-6}, {4, 5e-6}}, 1, roof, roof);
  REQUIRE(c.xs.size() == 3);  // the two x = 4 points are averaged
  CHECK(c.at(1) == Approx(2e-6));
  CHECK(c.at(4) == Approx(4e-6));
  CHECK(c.at(16) == Approx(9e-6));
  double prev = c.at(4);
  for (double x = 4.5; x < 16; x += 0.5) {
    const double t = c.at(x);
    CHECK(t >= prev);
    CHECK(t <= 9e-6);
    prev = t;
  }
  // log-space: halfway in log between 4 and 16 is 8, halfway in time
  CHECK(c.at(8) == Approx(6.5e-6));
  CHECK(c.at(0.5) == Approx(2e-6));  // floor below the first point
  // beyond the last point, the efficiency measured there: 9 us where the roofline says 16 us, so 64 tokens
  // take 4x that (the roofline's 64 / 16), not 9 us plus the roofline's 48 us
  CHECK(c.at(64) == Approx(9e-6 * 64 / 16));
}

TEST_CASE("op curve beyond its last point never falls below it", "[op_profile]") {
  OpRoofline flat;  // a roofline that stops growing (or is zero) leaves the last latency
  flat.m0 = 1e-6;
  const OpCurve c = make_curve({{1, 2e-6}, {8, 5e-6}}, 1, flat, flat);
  CHECK(c.at(64) == Approx(5e-6));
  const OpCurve none = make_curve({{1, 2e-6}, {8, 5e-6}}, 1, OpRoofline{}, OpRoofline{});
  CHECK(none.at(64) == Approx(5e-6));
}

TEST_CASE("op curve scales an unmeasured shape by the two rooflines", "[op_profile]") {
  const OpCurve c = make_curve({{1, 4e-6}, {8, 8e-6}}, 1, linear_roof(2e-6), linear_roof(1e-6));
  CHECK(c.at(1) == Approx(8e-6));
  CHECK(c.at(8) == Approx(16e-6));
}

TEST_CASE("a tabulated curve gives the same value as the search, at every whole unit and between them",
          "[op_profile]") {
  const OpRoofline roof = linear_roof(1e-9);
  const OpCurve plain = make_curve({{8, 2e-6}, {64, 3e-6}, {512, 7e-6}, {3000, 2e-5}}, 1, roof, roof);
  for (const double unit : {1.0, 12288.0, 619520.0}) {  // tokens; bytes of a BF16 6144 hidden; FP32 logits
    OpCurve c = make_curve({{8 * unit, 2e-6}, {64 * unit, 3e-6}, {512 * unit, 7e-6}, {3000 * unit, 2e-5}}, 1,
                           linear_roof(1e-9 / unit), linear_roof(1e-9 / unit));
    const OpCurve searched = c;
    c.tabulate(1024, unit);
    REQUIRE(c.whole.size() == 1024);
    for (int pass = 0; pass < 2; ++pass) {   // the first computes and remembers, the second reads back
      for (int64_t n = 1; n <= 4096; ++n) {  // inside the table, then beyond it (the search again)
        const double x = double(n) * unit;
        CHECK(c.at(x) == searched.at(x));  // bit for bit: outputs must not move
        CHECK(c.at(x + 0.5) == searched.at(x + 0.5));
      }
    }
    CHECK(c.at(100 * unit) == Approx(plain.at(100)));
  }
  OpCurve empty;
  empty.tabulate(16);
  CHECK(empty.whole.empty());
  CHECK(empty.at(4) == 0);
}

TEST_CASE("op grid interpolates between batch rows and extrapolates by the roofline", "[op_profile]") {
  OpRoofline roof;
  roof.cbx = 1e-9;
  OpGrid g;
  g.add_row(make_curve({{16, 1e-5}, {256, 2e-5}}, 1, roof, roof));
  g.add_row(make_curve({{16, 3e-5}, {256, 5e-5}}, 4, roof, roof));
  CHECK(g.at(1, 16) == Approx(1e-5));
  CHECK(g.at(4, 256) == Approx(5e-5));
  CHECK(g.at(2, 16) == Approx(2e-5));           // log-halfway between batch 1 and 4
  CHECK(g.at(8, 256) == Approx(5e-5 * 8 / 4));  // the last row's efficiency at twice its batch
}

TEST_CASE("op grid rows sharing their leading sizes give the value of each row's own search",
          "[op_profile]") {
  OpRoofline roof;
  roof.cbx = 1e-9;
  // Ragged rows as the tables have them: a bigger batch measured over fewer contexts (a prefix of the
  // smaller batch's), and one row measured at other contexts.
  const std::vector<std::pair<double, double>> pts1 = {{2, 1e-5},  {5, 1.1e-5}, {9, 1.3e-5}, {17, 1.6e-5},
                                                       {33, 2e-5}, {65, 3e-5},  {129, 5e-5}};
  const std::vector<std::pair<double, double>> pts4 = {
      {2, 2e-5}, {5, 2.1e-5}, {9, 2.4e-5}, {17, 3e-5}, {33, 4e-5}};
  const std::vector<std::pair<double, double>> pts16 = {{3, 5e-5}, {40, 9e-5}, {100, 2e-4}};
  OpGrid g;
  g.add_row(make_curve(pts1, 1, roof, roof));
  g.add_row(make_curve(pts4, 4, roof, roof));
  g.add_row(make_curve(pts16, 16, roof, roof));
  REQUIRE(g.bs == std::vector<double>{1, 4, 16});
  OpGrid tabulated = g;
  tabulated.tabulate(256);
  for (const double b : {1.0, 2.0, 3.0, 4.0, 7.0, 12.0, 15.5}) {
    for (double x = 0.5; x < 200; x += 0.75) {
      // What at() computed before it shared the search: each row on its own, then the log weight in b.
      double expected = 0;
      if (b <= 1) {
        expected = g.rows[0].at(x);
      } else {
        const size_t lo = b < 4 ? 0 : 1;
        const double u = std::log(b / g.bs[lo]) / std::log(g.bs[lo + 1] / g.bs[lo]);
        const double t_lo = g.rows[lo].at(x), t_hi = g.rows[lo + 1].at(x);
        expected = t_lo + u * (t_hi - t_lo);
      }
      CHECK(g.at(b, x) == expected);  // bit for bit
      CHECK(tabulated.at(b, x) == expected);
      CHECK(tabulated.at(b, std::floor(x)) == g.at(b, std::floor(x)));
    }
  }
}

}  // namespace tokenline
