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
