#include "workloads/workload_window.h"

#include <catch2/catch.hpp>

#include "common/input_error.h"
#include "test_sources.h"
#include "workloads/tokenline_reader.h"

namespace tokenline {
namespace {

using test::drain;
using test::text_lines;

// Ten requests arriving at 0, 1, ..., 9 s.
std::unique_ptr<WorkloadSource> ten_requests() {
  std::string text;
  for (int i = 0; i < 10; ++i)
    text += "{\"arrival_s\": " + std::to_string(i) + ", \"input_tokens\": " + std::to_string(100 + i) +
            ", \"output_tokens\": 1}\n";
  return std::make_unique<TokenlineReader>(text_lines(text), ReaderOptions{});
}

TEST_CASE("window: scale, keep start <= t < start + duration, shift, renumber", "[window]") {
  WindowedSource w(ten_requests(), WindowOptions{.time_scale = 2.0, .start_s = 4.0, .duration_s = 6.0});
  const auto rs = drain(w);
  // scaled arrivals 0, 2, 4, ..., 18; kept 4, 6, 8 -> shifted 0, 2, 4
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].arrival_s == 0.0);
  CHECK(rs[0].input_tokens == 102);
  CHECK(rs[2].arrival_s == 4.0);
  CHECK(rs[2].id == 2);
}

TEST_CASE("window: max requests and closed loop", "[window]") {
  WindowedSource capped(ten_requests(), WindowOptions{.max_requests = 4});
  CHECK(drain(capped).size() == 4);
  WindowedSource closed(ten_requests(), WindowOptions{.start_s = 5.0, .closed_loop = true});
  const auto rs = drain(closed);
  REQUIRE(rs.size() == 5);
  for (const auto& r : rs) CHECK(r.arrival_s == 0.0);
  CHECK(rs.front().input_tokens == 105);  // order kept
}

TEST_CASE("window options are checked", "[window]") {
  CHECK_THROWS_WITH(check_window(WindowOptions{.time_scale = 0}),
                    "--time-scale: expected a number > 0, found 0");
  CHECK_THROWS_WITH(check_window(WindowOptions{.start_s = -1}), "--start: expected a time >= 0 s, found -1");
  CHECK_THROWS_WITH(check_window(WindowOptions{.duration_s = 0}),
                    "--duration: expected a time > 0 s, found 0");
  CHECK_NOTHROW(check_window(WindowOptions{}));
}

TEST_CASE("a time scale that overflows virtual time is refused", "[window][input_limits]") {
  WindowedSource huge(ten_requests(), WindowOptions{.time_scale = 1e300});
  REQUIRE(huge.next());  // the first arrival, 0 s, is in range
  try {
    huge.next();
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "tokenline:fixture: request 1 arrival: expected a time <= 1e+09 s after --time-scale 1e+300 (int64 "
          "nanoseconds of virtual time), found 1e+300 s");
  }
  WindowedSource fine(ten_requests(), WindowOptions{.time_scale = 1e8});
  CHECK(drain(fine).size() == 10);
}

}  // namespace
}  // namespace tokenline
