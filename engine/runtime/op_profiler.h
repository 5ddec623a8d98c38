// OpProfiler: measures the real engine's ops (ledger names) on its KernelSet over a grid of step shapes,
// by executing synthetic steps on a ModelRunner - the same runner, forward pass, rank threads and
// in-process communicators `tokenline run` uses - and keeping, per op, the median over repeats after a
// warm-up. Repeats are interleaved: each pass over the grid measures every point once, so a burst of load
// from other processes spoils one repeat of a point, not all of them. Every attention group runs the same
// shape (so a rank's collectives wait for no slower peer). Not thread-safe; the runner's rank threads are its
// own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cost/op_profile_writer.h"
#include "engine/runtime/model_runner.h"

namespace tokenline {

// The shapes one profile measures. Decode: `batch` sequences each attending to `keys` keys (its context
// plus the new token); prefill: `batch` sequences of `tokens` new tokens each, no prefix, each sampling.
struct ProfileGrid {
  std::vector<int64_t> decode_batches{1, 4, 16};
  std::vector<int64_t> decode_keys{64, 512, 2048};
  std::vector<int64_t> prefill_batches{1, 4};
  std::vector<int64_t> prefill_tokens{16, 128, 512};
  int32_t warmup = 1;   // steps run and dropped before each point (caches, thread start-up)
  int32_t repeats = 3;  // steps measured per point; the median is kept
};

// Parses "decode-batch=1,4,16;decode-keys=64,512;prefill-batch=1;prefill-tokens=16,128;warmup=1;repeats=3"
// over `base` (any subset of the keys, in any order); throws InputError naming the --grid part.
ProfileGrid parse_profile_grid(const std::string& text, ProfileGrid base = {});

struct GridPoint {
  bool decode = true;
  bool alone = false;  // only the first attention group runs the shape, the others idle (DP layouts)
  int64_t batch = 0;
  int64_t tokens = 0;  // decode: keys; prefill: new tokens per sequence
};

// The grid's points in the order they are measured: decode (batch, keys), then prefill; with more than
// one attention group (DP), the same points again with only the first group busy (alone): under DP a
// step's groups share the machine's cores, so one group runs faster while the others idle.
std::vector<GridPoint> grid_points(const ProfileGrid& grid, int32_t groups = 1);

// KV pages one attention group needs for the largest point of the grid.
int64_t grid_pages(const ProfileGrid& grid, int32_t page_tokens);

struct OpProfileResult {
  std::vector<OwnOpRow> rows;  // every op the engine ran at any point, at every point (0 where absent)
  double step_overhead_s = 0;  // median over points of (step time - its ops' times)
};

// Called after each measured step with (steps done, steps in all, its point, its step seconds).
using ProfileProgress = std::function<void(size_t, size_t, const GridPoint&, double)>;

// REQUIRES: runner.config's total_pages >= grid_pages(grid, page_tokens); no request of the runner in
// flight (each step's synthetic requests take ids from 0 and are forgotten after it, as speed_probe_s'
// are, so a probe may run first).
OpProfileResult profile_ops(ModelRunner& runner, const RunnerConfig& config, const ProfileGrid& grid,
                            const ProfileProgress& progress);

// The engine's speed probe: seconds of a fixed pair of synthetic steps on `runner` (every attention group:
// a decode of 4 sequences x 64 keys, fewer where the KV pages hold less, and a 64-token prefill), median
// of 7 after a warm-up. The same work every time, so two probes' ratio is how much slower the machine ran
// this engine - a host can slow a virtual machine with no process in it. `tokenline profile` records it
// with the rows (timing.speed_probe_s), `tokenline run` before and after a run (metrics.json), and
// `sim --speed-of` prices a profile at a run's. ~0.2-0.5 s on a CPU. REQUIRES: no request of the runner in
// flight.
double speed_probe_s(ModelRunner& runner, const RunnerConfig& config);

}  // namespace tokenline

namespace tokenline {

struct KernelSet;

// The machine's rates for hardware.json, measured on `kernels` (GEMM, copy; nullptr: the CPU set) and on
// an in-process communicator of two thread ranks (all-reduce of a large and of a one-float message).
// Takes ~1 s.
OwnHardware measure_machine(const KernelSet* kernels);

}  // namespace tokenline
