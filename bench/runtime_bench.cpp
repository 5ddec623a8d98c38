// Google Benchmarks of the real engine's model runner on the CPU reference kernels (glm-5.3-tiny): one
// decode step of 8 requests at 256-token context, unsharded and split over in-process ranks (threads),
// with and without an MTP draft, and one 512-token prefill. Wall time per step (the ranks are threads).
#include <benchmark/benchmark.h>

#include <memory>

#include "engine/runtime/clock.h"
#include "engine/runtime/model_runner.h"

namespace tokenline {
namespace {

constexpr int32_t kPageTokens = 64;
constexpr int64_t kRequests = 8;
constexpr int64_t kContextTokens = 256;
constexpr int64_t kPagesPerRequest = (kContextTokens + 2 + kPageTokens - 1) / kPageTokens;  // + token + draft
constexpr int64_t kPrefillTokens = 512;

struct Layout {
  int32_t dp, tp, ep, mtp;
};

// Requests 0..7 with 256-token prompts, prefilled; request i decodes on group i % dp with pages
// [i * kPagesPerRequest, ...) of its group's pool.
StepBatches decode_step(const Layout& l, bool prefill) {
  StepBatches step;
  step.ranks.resize(static_cast<size_t>(l.dp));
  step.pages.assign(static_cast<size_t>(l.dp), BatchPages{.indptr = {0},
                                                          .indices = {},
                                                          .window_indptr = {},
                                                          .window_indices = {},
                                                          .window_first = {},
                                                          .state_slots = {}});
  for (int32_t d = 0; d < l.dp; ++d) step.ranks[static_cast<size_t>(d)].rank = d;
  for (int64_t i = 0; i < kRequests; ++i) {
    const auto d = static_cast<size_t>(i % l.dp);
    BatchEntry e{.id = i,
                 .phase = Phase::kDecode,
                 .new_tokens = 1 + l.mtp,
                 .context_tokens = kContextTokens,
                 .draft_tokens = l.mtp,
                 .last_chunk = false};
    if (prefill)
      e = BatchEntry{.id = i, .phase = Phase::kPrefill, .new_tokens = kContextTokens, .last_chunk = true};
    step.ranks[d].entries.push_back(e);
    BatchPages& table = step.pages[d];
    for (int64_t p = 0; p < kPagesPerRequest; ++p)
      table.indices.push_back(static_cast<int32_t>((i / l.dp) * kPagesPerRequest + p));
    table.indptr.push_back(static_cast<int32_t>(table.indices.size()));
  }
  return step;
}

void BM_RunnerDecodeStep(benchmark::State& state) {
  const Layout l{static_cast<int32_t>(state.range(0)), static_cast<int32_t>(state.range(1)),
                 static_cast<int32_t>(state.range(2)), static_cast<int32_t>(state.range(3))};
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  SteadyClock clock;
  ModelRunner runner(shape, ModelWeights::random(shape, 1),
                     RunnerConfig{.dp_ranks = l.dp,
                                  .tp = l.tp,
                                  .ep = l.ep,
                                  .total_pages = kRequests * kPagesPerRequest,
                                  .page_tokens = kPageTokens,
                                  .mtp_draft_tokens = l.mtp,
                                  .op_detail = false},
                     clock);
  for (int64_t i = 0; i < kRequests; ++i) {
    std::vector<int32_t> prompt(kContextTokens);
    for (int64_t t = 0; t < kContextTokens; ++t)
      prompt[static_cast<size_t>(t)] = static_cast<int32_t>((i * 131 + t * 7) % shape.vocab);
    runner.set_prompt(i, prompt);
  }
  (void)runner.execute(decode_step(l, true));  // prefill; samples each request's first token
  for (auto _ : state) {
    // The same step again and again: the decode rewrites the same positions.
    benchmark::DoNotOptimize(runner.execute(decode_step(l, false)));
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kRequests), benchmark::Counter::kIsRate);
}
// dp, tp, ep, mtp
BENCHMARK(BM_RunnerDecodeStep)
    ->ArgNames({"dp", "tp", "ep", "mtp"})
    ->Args({1, 1, 1, 0})
    ->Args({1, 1, 1, 1})
    ->Args({1, 2, 1, 0})
    ->Args({2, 1, 2, 0})
    ->Args({2, 2, 4, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RunnerPrefill(benchmark::State& state) {
  const ModelShape shape = load_model_shape("glm-5.3-tiny");
  SteadyClock clock;
  constexpr int64_t kPages = kPrefillTokens / kPageTokens;
  ModelRunner runner(shape, ModelWeights::random(shape, 1),
                     RunnerConfig{.total_pages = kPages, .page_tokens = kPageTokens, .op_detail = false},
                     clock);
  std::vector<int32_t> prompt(kPrefillTokens);
  for (int64_t t = 0; t < kPrefillTokens; ++t)
    prompt[static_cast<size_t>(t)] = static_cast<int32_t>((t * 7) % shape.vocab);
  StepBatches step;
  step.pages.push_back(BatchPages{.indptr = {0, static_cast<int32_t>(kPages)},
                                  .indices = {},
                                  .window_indptr = {},
                                  .window_indices = {},
                                  .window_first = {},
                                  .state_slots = {}});
  for (int64_t p = 0; p < kPages; ++p) step.pages[0].indices.push_back(static_cast<int32_t>(p));
  step.ranks.push_back(
      Batch{.rank = 0,
            .entries = {BatchEntry{
                .id = 1, .phase = Phase::kPrefill, .new_tokens = kPrefillTokens, .last_chunk = true}}});
  for (auto _ : state) {
    runner.set_prompt(1, prompt);  // drops what the last iteration sampled
    benchmark::DoNotOptimize(runner.execute(step));
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(state.iterations() * kPrefillTokens),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RunnerPrefill)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tokenline
