// OpProfiler: the grid option, its points and pages, and the measured rows - keyed by the grid alone and,
// under a fake clock, identical run to run.
#include "engine/runtime/op_profiler.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "common/input_error.h"
#include "tests/engine/runtime/fake_clock.h"

using namespace tokenline;

namespace {

constexpr int32_t kPageTokens = 16;
constexpr double kTickS = 1e-6;

ProfileGrid small_grid() {
  return parse_profile_grid(
      "decode-batch=1,2;decode-keys=8,20;prefill-batch=1;prefill-tokens=4,12;repeats=1");
}

std::string grid_error(const std::string& text) {
  try {
    parse_profile_grid(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<OwnOpRow> profile_with_fake_clock(const ProfileGrid& grid, int32_t dp, int32_t tp, int32_t ep) {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  const ModelWeights weights = ModelWeights::random(shape, 7);
  const RunnerConfig config{.dp_ranks = dp,
                            .tp = tp,
                            .ep = ep,
                            .total_pages = grid_pages(grid, kPageTokens),
                            .page_tokens = kPageTokens};
  test::FakeClock clock(kTickS);
  ModelRunner runner(shape, weights, config, clock);
  return profile_ops(runner, config, grid, nullptr).rows;
}

}  // namespace

TEST_CASE("the --grid option sets lists sorted and deduplicated and names a bad part", "[op_profiler]") {
  const ProfileGrid g = parse_profile_grid("decode-keys=512,64,64;repeats=5");
  CHECK(g.decode_keys == std::vector<int64_t>{64, 512});
  CHECK(g.repeats == 5);
  CHECK(g.decode_batches == ProfileGrid{}.decode_batches);  // untouched keys keep the defaults
  CHECK(grid_error("decode-keys=0").find("--grid decode-keys") != std::string::npos);
  CHECK(grid_error("batch=1").find("'batch'") != std::string::npos);
  CHECK(grid_error("repeats").find("key=value") != std::string::npos);
}

TEST_CASE("grid points come decode first, batch-major, and pages cover the largest point", "[op_profiler]") {
  const ProfileGrid g = small_grid();
  const std::vector<GridPoint> p = grid_points(g);
  REQUIRE(p.size() == 6);
  CHECK((p[0].decode && p[0].batch == 1 && p[0].tokens == 8));
  CHECK((p[1].decode && p[1].batch == 1 && p[1].tokens == 20));
  CHECK((p[3].decode && p[3].batch == 2 && p[3].tokens == 20));
  CHECK((!p[4].decode && p[4].tokens == 4));
  CHECK(grid_pages(g, kPageTokens) == 4);  // 2 sequences x ceil(20 / 16) pages
  // With two attention groups, the same points again with only the first group busy.
  const std::vector<GridPoint> dp = grid_points(g, 2);
  REQUIRE(dp.size() == 12);
  for (size_t i = 0; i < p.size(); ++i) {
    CHECK(!dp[i].alone);
    CHECK(dp[p.size() + i].alone);
    CHECK((dp[p.size() + i].decode == p[i].decode && dp[p.size() + i].batch == p[i].batch &&
           dp[p.size() + i].tokens == p[i].tokens));
  }
}

TEST_CASE("profile rows are keyed by the grid and identical under the same clock", "[op_profiler]") {
  const ProfileGrid g = small_grid();
  const std::vector<OwnOpRow> a = profile_with_fake_clock(g, 1, 1, 1);
  const std::vector<OwnOpRow> b = profile_with_fake_clock(g, 1, 1, 1);
  CHECK(own_ops_csv(a) == own_ops_csv(b));
  std::set<std::string> ops;
  for (const OwnOpRow& r : a) ops.insert(r.op);
  CHECK(a.size() == ops.size() * grid_points(g).size());  // every op at every point
  CHECK(ops.count("sparse_mla") == 1);
  CHECK(ops.count("expert_gemm") == 1);
  CHECK(ops.count("dispatch") == 0);  // no EP at tp1
  for (const OwnOpRow& r : a) {
    if (r.op == "a_proj") CHECK(r.latency_ms > 0);
  }
}

TEST_CASE("a split layout profiles its collectives on the in-process communicators", "[op_profiler]") {
  const ProfileGrid g =
      parse_profile_grid("decode-batch=1;decode-keys=8;prefill-batch=1;prefill-tokens=4;repeats=1");
  std::set<std::string> ops;
  const std::vector<OwnOpRow> rows = profile_with_fake_clock(g, 2, 1, 2);
  size_t alone = 0;
  for (const OwnOpRow& r : rows) {
    ops.insert(r.op);
    alone += r.alone ? 1 : 0;
  }
  CHECK(ops.count("dispatch") == 1);
  CHECK(ops.count("combine") == 1);
  CHECK(alone == rows.size() / 2);  // every point again with one group busy (DP)
  for (const OwnOpRow& r : rows) {
    if (r.op == "a_proj") CHECK(r.latency_ms > 0);  // the busy group ran it, alone or not
  }
}

TEST_CASE("the speed probe is fixed work: the same under the same clock, twice under a clock twice as slow",
          "[op_profiler]") {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  const ModelWeights weights = ModelWeights::random(shape, 7);
  auto probe = [&](double tick_s, int64_t pages, int32_t dp, int32_t ep) {
    const RunnerConfig config{
        .dp_ranks = dp, .tp = 1, .ep = ep, .total_pages = pages, .page_tokens = kPageTokens};
    test::FakeClock clock(tick_s);
    ModelRunner runner(shape, weights, config, clock);
    return speed_probe_s(runner, config);
  };
  const double p = probe(kTickS, 64, 1, 1);
  CHECK(p > 0);
  CHECK(probe(kTickS, 64, 1, 1) == Approx(p).epsilon(1e-9));
  CHECK(probe(2 * kTickS, 64, 1, 1) == Approx(2 * p).epsilon(1e-9));
  // Fewer KV pages than the probe's decode batch wants: a smaller batch and context within the pages (the
  // sanitizer build checks no page beyond them is touched), still a probe.
  CHECK(probe(kTickS, 2, 1, 1) > 0);
  CHECK(probe(kTickS, 64, 2, 2) > 0);  // every attention group of a DP layout
}
