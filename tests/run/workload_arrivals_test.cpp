// Workloads into the driver: conversion to the core's RequestSpec, and whole real traces end to end
// (skipped with a message when shared/traces is absent; the traces are never copied into the repository).
#include "run/workload_arrivals.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/cli/tokenline_process.h"

namespace tokenline {
namespace {

using testing::read_json;
using testing::run_tokenline;
using testing::TestDir;

TEST_CASE("workload requests become request specs with their prefix blocks", "[workload_arrivals]") {
  TestDir dir("arrivals");
  const std::string path = dir.file("w.jsonl");
  std::ofstream(path)
      << R"({"arrival_s": 0.5, "input_tokens": 1000, "output_tokens": 20, "hash_ids": [7, 9], "priority": 3})"
      << "\n";
  WorkloadSpec spec;
  spec.spec = path;
  auto source = open_arrivals(spec);
  TimedRequest a;
  REQUIRE(source->next(a));
  CHECK(a.arrival_s == 0.5);
  CHECK(a.spec.id == 0);
  CHECK(a.spec.prompt_tokens == 1000);
  CHECK(a.spec.output_tokens == 20);
  CHECK(a.spec.block_hashes == std::vector<uint64_t>{7, 9});
  CHECK(a.spec.block_tokens == 512);
  CHECK(a.spec.priority == 3);  // larger = more urgent in the workload and in the core alike
  CHECK_FALSE(source->next(a));
}

TEST_CASE("a workload's own rate is its requests over its arrival span, and --rate rescales to any rate",
          "[workload_arrivals]") {
  TestDir dir("arrivals_rate");
  const std::string path = dir.file("w.jsonl");
  {
    std::ofstream out(path);
    for (const double t : {1.0, 2.0, 4.0, 9.0})  // 4 requests, 3 gaps over 8 s
      out << R"({"arrival_s": )" << t << R"(, "input_tokens": 10, "output_tokens": 2})"
          << "\n";
  }
  WorkloadSpec spec;
  spec.spec = path;
  spec.options.window.time_scale = 7.0;  // the native rate ignores the window's scale
  CHECK(native_rate_rps(spec) == Approx(3.0 / 8.0));
  spec.options.window.max_requests = 3;  // ... but keeps its request count: 2 gaps over 3 s
  CHECK(native_rate_rps(spec) == Approx(2.0 / 3.0));
  CHECK(time_scale_for_rate(0.375, 3.0) == Approx(0.125));
  CHECK_THROWS_WITH(time_scale_for_rate(0.375, 0.0), Catch::Contains("--rate"));
  CHECK_THROWS_WITH(time_scale_for_rate(0.0, 3.0), Catch::Contains("without an arrival rate"));
}

TEST_CASE("the Mooncake conversation trace hits the prefix cache and the cache size changes the rate",
          "[workload_arrivals][trace]") {
  const std::string trace = testing::shared_trace("conversation_trace.jsonl");
  if (trace.empty()) {
    WARN("SKIPPED: shared/traces/conversation_trace.jsonl is absent");
    return;
  }
  TestDir dir("mooncake");
  // The first 20 minutes of the trace (about a third of it) keep the test fast.
  const std::string common =
      "sim --workload '" + trace +
      "' --duration 1200 --cluster h200x8 --parallel dp8-ep8 --dp-assign prefix-aware --roofline";
  REQUIRE(run_tokenline(common + " --out '" + dir.file("big") + "'", dir).exit_code == 0);
  // 1024 pages x 64 tokens = 64K tokens per rank: room for the running requests, little for the cache.
  REQUIRE(run_tokenline(common + " --kv-pages 1024 --out '" + dir.file("small") + "'", dir).exit_code == 0);
  const auto big = read_json(dir.file("big/metrics.json"));
  const auto small = read_json(dir.file("small/metrics.json"));
  CHECK(big["requests"]["arrived"].get<int64_t>() > 3000);
  for (const auto* m : {&big, &small}) {
    const auto& req = (*m)["requests"];
    CHECK(req["arrived"] == big["requests"]["arrived"]);
    CHECK(req["completed"].get<int64_t>() + req["rejected"].get<int64_t>() == req["arrived"].get<int64_t>());
  }
  const double big_rate = big["prefix_cache"]["hit_rate"];
  const double small_rate = small["prefix_cache"]["hit_rate"];
  CHECK(big_rate > 0);
  CHECK(small_rate < big_rate);
}

TEST_CASE("the Azure conversation trace runs end to end", "[workload_arrivals][trace]") {
  const std::string trace = testing::shared_trace("AzureLLMInferenceTrace_conv.csv");
  if (trace.empty()) {
    WARN("SKIPPED: shared/traces/AzureLLMInferenceTrace_conv.csv is absent");
    return;
  }
  TestDir dir("azure");
  const auto r =
      run_tokenline("sim --workload '" + trace + "' --cluster h200x8 --out '" + dir.file("o") + "'", dir);
  REQUIRE(r.exit_code == 0);
  const auto m = read_json(dir.file("o/metrics.json"));
  const auto& req = m["requests"];
  CHECK(req["arrived"] == 19366);
  CHECK(req["completed"].get<int64_t>() + req["rejected"].get<int64_t>() == 19366);
  CHECK(m["prefix_cache"]["hit_tokens"] == 0);  // Azure has no prefix information
  CHECK(testing::read_csv_rows(dir.file("o/requests.csv")).size() == 19366);
}

}  // namespace
}  // namespace tokenline
