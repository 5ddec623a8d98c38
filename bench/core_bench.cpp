// Google Benchmarks of the shared core's hot paths: one decode step planned and committed with 256 and
// 1,024 running requests at 128K context, and a radix-cache match of a 1M-token prefix.
#include <benchmark/benchmark.h>

#include <memory>

#include "engine/core/instance.h"
#include "engine/core/kv_manager.h"
#include "engine/core/request.h"
#include "pcg_random.hpp"

namespace tokenline {
namespace {

constexpr int64_t kPageTokens = 64;             // SGLang's page size
constexpr int64_t kContextTokens = 128 * 1024;  // "128K context"
constexpr int64_t kContextPages = kContextTokens / kPageTokens;
constexpr int64_t kOutputTokens = 1 << 20;       // never reached while benchmarking
constexpr int64_t kDecodeIterations256 = 20000;  // 20,000 steps grow each request by 313 pages
constexpr int64_t kDecodeIterations1024 = 5000;
constexpr int64_t kGrowthPages = kDecodeIterations256 / kPageTokens + 1;  // headroom per request
constexpr int64_t kMillionTokens = int64_t{1} << 20;
constexpr int64_t kMooncakeBlockTokens = 512;

// An instance whose requests all arrived with their KV (the PD decode-side entry) and are decoding.
std::unique_ptr<Instance> decoding_instance(int64_t requests) {
  InstanceConfig config;
  config.kv.page_tokens = kPageTokens;
  config.kv.total_pages = requests * (kContextPages + kGrowthPages);
  config.kv.reservation = ReservationPolicy::kIncremental;
  config.scheduler.role = InstanceRole::kDecodeOnly;
  config.scheduler.max_running_requests = static_cast<int32_t>(requests);
  config.scheduler.max_context_tokens = kContextTokens + kOutputTokens;
  auto instance = std::make_unique<Instance>(config);
  for (int64_t id = 0; id < requests; ++id) {
    RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = kContextTokens;
    spec.output_tokens = kOutputTokens;
    instance->add_request_with_kv(std::move(spec), 0.0);
  }
  StepPlan plan;
  instance->plan(plan);
  instance->commit(plan, StepOutcome{}, 0.0);  // admits every request
  return instance;
}

void BM_DecodeStepPlanCommit(benchmark::State& state) {
  const int64_t requests = state.range(0);
  std::unique_ptr<Instance> instance = decoding_instance(requests);
  StepPlan plan;
  StepOutcome outcome;
  double now_s = 0;
  for (auto _ : state) {
    instance->plan(plan);
    now_s += 0.02;
    instance->commit(plan, outcome, now_s);
    benchmark::DoNotOptimize(plan.batches.ranks[0].entries.data());
  }
  if (plan.batches.ranks[0].decode_requests() != requests) state.SkipWithError("not every request decoded");
  state.counters["requests"] = static_cast<double>(requests);
  state.counters["ns_per_request"] =
      benchmark::Counter(static_cast<double>(requests),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DecodeStepPlanCommit)->Arg(256)->Iterations(kDecodeIterations256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeStepPlanCommit)
    ->Arg(1024)
    ->Iterations(kDecodeIterations1024)
    ->Unit(benchmark::kMicrosecond);

void BM_RadixMatch1M(benchmark::State& state) {
  KvConfig config;
  config.page_tokens = kPageTokens;
  config.total_pages = kMillionTokens / kPageTokens;
  KvManager kv(config);
  RequestSpec spec;
  spec.id = 1;
  spec.prompt_tokens = kMillionTokens;
  spec.block_tokens = kMooncakeBlockTokens;
  for (int64_t b = 0; b < kMillionTokens / kMooncakeBlockTokens; ++b)
    spec.block_hashes.push_back(1000 + static_cast<uint64_t>(b));
  const std::vector<uint64_t> keys = derive_page_keys(spec, kPageTokens);
  kv.admit(0, kv.match(keys, 0), kMillionTokens);
  kv.grow(0, kMillionTokens);
  kv.cache_pages(0, keys);
  const int64_t pages = static_cast<int64_t>(keys.size());
  for (auto _ : state) {
    const PrefixMatch m = kv.match(keys, pages);
    benchmark::DoNotOptimize(m.pages);
  }
  if (kv.match(keys, pages).pages != pages) state.SkipWithError("the 1M prefix did not match");
  state.counters["pages"] = static_cast<double>(pages);
  state.counters["ns_per_page"] =
      benchmark::Counter(static_cast<double>(pages),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RadixMatch1M)->Unit(benchmark::kMicrosecond);

// A whole synthetic trace through one instance with a zero-cost executor: the core's share of a
// simulation. 20,000 requests (prompts 1-16K tokens, outputs 1-600, a quarter sharing one of 8 system
// prompts of 2K tokens) arrive at t=0; the run ends when every request has finished.
constexpr int64_t kTraceRequests = 20000;
constexpr uint32_t kMaxPromptTokens = 16384;
constexpr uint32_t kMaxOutputTokens = 600;
constexpr int64_t kSystemPromptBlocks = 4;   // 4 x 512 = 2K shared tokens
constexpr int64_t kTracePoolPages = 200000;  // 12.8M tokens of KV

void BM_Trace20k(benchmark::State& state) {
  int64_t steps = 0;
  for (auto _ : state) {
    InstanceConfig config;
    config.kv.page_tokens = kPageTokens;
    config.kv.total_pages = kTracePoolPages;
    config.scheduler.max_running_requests = 256;
    Instance instance(config);
    pcg32 rng(7);
    for (int64_t id = 0; id < kTraceRequests; ++id) {
      RequestSpec spec;
      spec.id = id;
      spec.prompt_tokens = 1 + rng(kMaxPromptTokens);
      spec.output_tokens = 1 + rng(kMaxOutputTokens);
      const bool shared = rng(4) == 0;
      const uint64_t family = rng(8);
      const int64_t blocks = (spec.prompt_tokens + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
      for (int64_t b = 0; b < blocks; ++b)
        spec.block_hashes.push_back(shared && b < kSystemPromptBlocks
                                        ? family * 100 + static_cast<uint64_t>(b)
                                        : (static_cast<uint64_t>(id) << 20) + static_cast<uint64_t>(b));
      instance.add_request(std::move(spec), 0.0);
    }
    StepPlan plan;
    StepOutcome outcome;
    std::vector<RequestRecord> records;
    double now_s = 0;
    steps = 0;
    while (instance.has_work()) {
      instance.plan(plan);
      now_s += 0.01;
      instance.commit(plan, outcome, now_s);
      instance.drain(records);
      records.clear();
      ++steps;
    }
    if (instance.counters().finished != kTraceRequests) state.SkipWithError("not every request finished");
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_Trace20k)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace tokenline
