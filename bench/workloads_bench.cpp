// Throughput of the workload readers and generators (lines or requests per second), so a trace of
// millions of requests can be judged against the simulator's own speed. Run:
//   build/bench/workloads_bench [--benchmark_filter=Mooncake]
// BM_MooncakeRealTrace reads $TOKENLINE_TRACES_DIR/conversation_trace.jsonl when set.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "workloads/azure_reader.h"
#include "workloads/mooncake_reader.h"
#include "workloads/synthetic_generator.h"
#include "workloads/workload_loader.h"

namespace tokenline {
namespace {

int64_t drain_count(WorkloadSource& source, int64_t& bytes_of_hashes) {
  int64_t n = 0;
  while (auto r = source.next()) {
    bytes_of_hashes += static_cast<int64_t>(r->block_hashes.size() * sizeof(int64_t));
    ++n;
  }
  return n;
}

// The embedded 200-line Mooncake head (47 KB, ~30 hash ids per line), parsed from memory.
void BM_MooncakeEmbedded(benchmark::State& state) {
  const std::string text(default_workload_text());
  int64_t requests = 0, hash_bytes = 0;
  for (auto _ : state) {
    MooncakeReader reader(LineReader(std::make_unique<std::istringstream>(text), "embedded"), {});
    requests += drain_count(reader, hash_bytes);
  }
  state.SetItemsProcessed(requests);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_MooncakeEmbedded);

// The full 12,031-line, 3.0 MB Mooncake conversation trace from disk (skipped without the env var).
void BM_MooncakeRealTrace(benchmark::State& state) {
  const char* dir = std::getenv("TOKENLINE_TRACES_DIR");
  const std::string path = std::string(dir != nullptr ? dir : "") + "/conversation_trace.jsonl";
  if (dir == nullptr || !std::ifstream(path)) {
    state.SkipWithError("set TOKENLINE_TRACES_DIR to the directory holding conversation_trace.jsonl");
    return;
  }
  int64_t requests = 0, hash_bytes = 0;
  for (auto _ : state) {
    MooncakeReader reader(LineReader::open_file(path), {});
    requests += drain_count(reader, hash_bytes);
  }
  state.SetItemsProcessed(requests);
}
BENCHMARK(BM_MooncakeRealTrace)->Unit(benchmark::kMillisecond);

// Azure CSV rows built in memory (10,000 rows, one per 0.1 s).
void BM_AzureInMemory(benchmark::State& state) {
  std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";
  constexpr int kRows = 10000;
  for (int i = 0; i < kRows; ++i) {
    const int tenths = i % 10, seconds = (i / 10) % 60, minutes = i / 600;
    text += "2023-11-16 18:" + std::string(minutes < 10 ? "0" : "") + std::to_string(minutes) + ":" +
            (seconds < 10 ? "0" : "") + std::to_string(seconds) + "." + std::to_string(tenths) +
            "000000,1020,129\r\n";
  }
  int64_t requests = 0, hash_bytes = 0;
  for (auto _ : state) {
    AzureReader reader(LineReader(std::make_unique<std::istringstream>(text), "azure"), {});
    requests += drain_count(reader, hash_bytes);
  }
  state.SetItemsProcessed(requests);
}
BENCHMARK(BM_AzureInMemory)->Unit(benchmark::kMillisecond);

// Synthetic requests: independent (with prefix groups) and multi-turn sessions; ~4 and ~10 blocks each.
void BM_Synthetic(benchmark::State& state, const char* spec) {
  int64_t requests = 0, hash_bytes = 0;
  for (auto _ : state) {
    SyntheticGenerator g(parse_synthetic_spec(spec), 0);
    requests += drain_count(g, hash_bytes);
  }
  state.SetItemsProcessed(requests);
}
BENCHMARK_CAPTURE(
    BM_Synthetic, groups,
    "n=10000,rate=10,input=lognormal:mean=1000,sigma=1,output=fixed:128,prefix_groups=8,prefix_tokens=1024")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Synthetic, sessions,
                  "sessions=2500,turns=4,rate=10,input=uniform:100:1000,output=uniform:50:500")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tokenline
