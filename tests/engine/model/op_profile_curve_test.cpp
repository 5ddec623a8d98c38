// OpCurve / OpGrid: exact at measured points, monotone between them, the last point's efficiency beyond, and
// unmeasured shapes scaled by the ratio of two rooflines.
#include "engine/model/op_profile_curve.h"

#include <catch2/catch.hpp>

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
  g.bs = {1, 4};
  g.rows = {make_curve({{16, 1e-5}, {256, 2e-5}}, 1, roof, roof),
            make_curve({{16, 3e-5}, {256, 5e-5}}, 4, roof, roof)};
  CHECK(g.at(1, 16) == Approx(1e-5));
  CHECK(g.at(4, 256) == Approx(5e-5));
  CHECK(g.at(2, 16) == Approx(2e-5));           // log-halfway between batch 1 and 4
  CHECK(g.at(8, 256) == Approx(5e-5 * 8 / 4));  // the last row's efficiency at twice its batch
}

}  // namespace tokenline
