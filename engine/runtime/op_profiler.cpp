#include "engine/runtime/op_profiler.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>
#include <thread>

#include "common/input_error.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/device_buffer.h"
#include "kernels/cpu/local_communicator.h"
#include "kernels/kernel_set.h"

namespace tokenline {
namespace {

constexpr int64_t kTokenStride = 7919;  // a prime: prompt tokens that differ row to row, no RNG needed
constexpr double kMsPerS = 1e3;

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

int64_t parse_count(std::string_view cell, const std::string& where) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || end != cell.data() + cell.size() || v < 1)
    throw InputError(where, "a positive integer", "'" + std::string(cell) + "'");
  return v;
}

std::vector<int64_t> parse_list(std::string_view value, const std::string& where) {
  std::vector<int64_t> out;
  for (std::string_view cell : split(value, ',')) out.push_back(parse_count(cell, where));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One synthetic step: every attention group `p.batch` sequences of the point's shape, pages laid out
// sequence after sequence. Prompts are (re)set so every repeat computes the same tokens.
StepBatches make_step(ModelRunner& runner, const RunnerConfig& c, const GridPoint& p) {
  const int64_t len = p.tokens;  // decode: context + the new token; prefill: the chunk
  const int64_t pages_each = (len + c.page_tokens - 1) / c.page_tokens;
  const int32_t vocab = runner.shape().vocab;
  const ModelShape& shape = runner.shape();
  const bool window = shape.mixer_layers(LayerMixer::kSlidingWindow) > 0;
  const bool linear = shape.mixer_layers(LayerMixer::kGatedDeltaNet) > 0;
  StepBatches step;
  for (int32_t g = 0; g < c.dp_ranks; ++g) {
    Batch batch{.rank = g, .entries = {}};
    BatchPages pages;
    pages.indptr.push_back(0);
    if (window) pages.window_indptr.push_back(0);
    int64_t next_window_page = 0;
    for (int64_t i = 0; i < (p.alone && g > 0 ? 0 : p.batch); ++i) {
      const RequestId id = int64_t{g} * p.batch + i;
      std::vector<int32_t> prompt(static_cast<size_t>(len));
      for (int64_t t = 0; t < len; ++t)
        prompt[static_cast<size_t>(t)] = int32_t((id * len + t) * kTokenStride % vocab);
      runner.set_prompt(id, std::move(prompt));
      batch.entries.push_back(BatchEntry{.id = id,
                                         .phase = p.decode ? Phase::kDecode : Phase::kPrefill,
                                         .new_tokens = p.decode ? 1 : len,
                                         .context_tokens = p.decode ? len - 1 : 0,
                                         .draft_tokens = 0,
                                         .last_chunk = !p.decode});
      for (int64_t k = 0; k < pages_each; ++k) pages.indices.push_back(int32_t(i * pages_each + k));
      pages.indptr.push_back(int32_t(pages.indices.size()));
      // A hybrid's window pages (those of the step's windows, as the core's ring holds them) and state
      // slot. Only times are measured: where the grid outgrows the pool or the slots, ids wrap around.
      if (window) {
        const int64_t context = p.decode ? len - 1 : 0;
        const int64_t first = std::max<int64_t>(0, context + 1 - shape.window_tokens) / c.page_tokens;
        for (int64_t k = first; k < pages_each; ++k)
          pages.window_indices.push_back(int32_t(next_window_page++ % std::max<int64_t>(1, c.window_pages)));
        pages.window_indptr.push_back(int32_t(pages.window_indices.size()));
        pages.window_first.push_back(int32_t(first));
      }
      if (linear) pages.state_slots.push_back(int32_t(i % std::max<int64_t>(1, c.state_slots)));
    }
    step.ranks.push_back(std::move(batch));
    step.pages.push_back(std::move(pages));
  }
  return step;
}

int op_index(const ModelShape& shape, const char* name) {
  for (int i = 0; i < kRunOpCount; ++i)
    if (std::string_view(shape.op_name(RunOp(i))) == name) return i;
  return -1;
}

// One repeat: per op the slowest group's whole-step time, and the step time outside every group's ops.
struct Sample {
  std::array<double, kRunOpCount> op_s{};
  double step_s = 0, overhead_s = 0;
};

Sample run_once(ModelRunner& runner, const RunnerConfig& c, const GridPoint& p) {
  const StepBatches step = make_step(runner, c, p);
  const StepOutcome out = runner.execute(step);
  std::vector<std::array<double, kRunOpCount>> per_group(static_cast<size_t>(c.dp_ranks));
  for (const OpSpan& span : out.ops) {
    const int i = op_index(runner.shape(), span.name);
    if (i >= 0) per_group[static_cast<size_t>(span.rank)][static_cast<size_t>(i)] += span.duration_s;
  }
  Sample s;
  double busiest_s = 0;
  for (const auto& g : per_group) {
    double sum = 0;
    for (int i = 0; i < kRunOpCount; ++i) {
      s.op_s[static_cast<size_t>(i)] = std::max(s.op_s[static_cast<size_t>(i)], g[static_cast<size_t>(i)]);
      sum += g[static_cast<size_t>(i)];
    }
    busiest_s = std::max(busiest_s, sum);
  }
  s.step_s = out.duration_s;
  s.overhead_s = std::max(0.0, out.duration_s - busiest_s);
  for (int32_t g = 0; g < c.dp_ranks; ++g)
    for (int64_t i = 0; i < p.batch; ++i) runner.forget(int64_t{g} * p.batch + i);
  return s;
}

}  // namespace

ProfileGrid parse_profile_grid(const std::string& text, ProfileGrid g) {
  for (std::string_view part : split(text, ';')) {
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    const std::string where = "--grid " + std::string(part.substr(0, eq));
    const std::string_view key = part.substr(0, eq);
    if (eq == std::string_view::npos)
      throw InputError("--grid", "key=value parts separated by ';'", "'" + std::string(part) + "'");
    const std::string_view value = part.substr(eq + 1);
    if (key == "decode-batch") {
      g.decode_batches = parse_list(value, where);
    } else if (key == "decode-keys") {
      g.decode_keys = parse_list(value, where);
    } else if (key == "prefill-batch") {
      g.prefill_batches = parse_list(value, where);
    } else if (key == "prefill-tokens") {
      g.prefill_tokens = parse_list(value, where);
    } else if (key == "warmup") {
      g.warmup = int32_t(parse_count(value, where));
    } else if (key == "repeats") {
      g.repeats = int32_t(parse_count(value, where));
    } else {
      throw InputError("--grid",
                       "decode-batch, decode-keys, prefill-batch, prefill-tokens, warmup or repeats",
                       "'" + std::string(key) + "'");
    }
  }
  return g;
}

std::vector<GridPoint> grid_points(const ProfileGrid& grid, int32_t groups) {
  std::vector<GridPoint> points;
  for (const bool alone : {false, true}) {
    if (alone && groups < 2) break;
    for (int64_t b : grid.decode_batches)
      for (int64_t k : grid.decode_keys) points.push_back({true, alone, b, k});
    for (int64_t b : grid.prefill_batches)
      for (int64_t t : grid.prefill_tokens) points.push_back({false, alone, b, t});
  }
  return points;
}

int64_t grid_pages(const ProfileGrid& grid, int32_t page_tokens) {
  int64_t most = 1;
  for (const GridPoint& p : grid_points(grid))
    most = std::max(most, p.batch * ((p.tokens + page_tokens - 1) / page_tokens));
  return most;
}

// Repeats are interleaved over the grid: pass r measures every point once (the first pass after each
// point's warm-up), so a burst of load from other processes lands on one repeat of the points it overlaps,
// which the median drops, rather than on every repeat of a few neighbouring points.
OpProfileResult profile_ops(ModelRunner& runner, const RunnerConfig& config, const ProfileGrid& grid,
                            const ProfileProgress& progress) {
  const std::vector<GridPoint> points = grid_points(grid, config.dp_ranks);
  std::vector<std::array<std::vector<double>, kRunOpCount>> op_s(points.size());
  std::vector<std::vector<double>> over_s(points.size());
  const size_t all = points.size() * size_t(grid.repeats);
  for (int32_t r = 0; r < grid.repeats; ++r) {
    for (size_t n = 0; n < points.size(); ++n) {
      for (int32_t w = 0; r == 0 && w < grid.warmup; ++w) run_once(runner, config, points[n]);
      const Sample s = run_once(runner, config, points[n]);
      for (int i = 0; i < kRunOpCount; ++i) op_s[n][size_t(i)].push_back(s.op_s[size_t(i)]);
      over_s[n].push_back(s.overhead_s);
      if (progress) progress(size_t(r) * points.size() + n + 1, all, points[n], s.step_s);
    }
  }
  std::vector<std::array<double, kRunOpCount>> medians(points.size());
  std::array<bool, kRunOpCount> ran{};
  std::vector<double> overheads;
  for (size_t n = 0; n < points.size(); ++n) {
    for (int i = 0; i < kRunOpCount; ++i) {
      medians[n][size_t(i)] = median(op_s[n][size_t(i)]);
      ran[size_t(i)] = ran[size_t(i)] || medians[n][size_t(i)] > 0;
    }
    overheads.push_back(median(over_s[n]));
  }
  OpProfileResult result;
  for (int i = 0; i < kRunOpCount; ++i) {
    if (!ran[static_cast<size_t>(i)]) continue;
    for (size_t n = 0; n < points.size(); ++n) {
      result.rows.push_back(OwnOpRow{.op = runner.shape().op_name(RunOp(i)),
                                     .decode = points[n].decode,
                                     .batch = points[n].batch,
                                     .tokens = points[n].tokens,
                                     .latency_ms = medians[n][static_cast<size_t>(i)] * kMsPerS,
                                     .alone = points[n].alone});
    }
  }
  result.step_overhead_s = median(overheads);
  return result;
}

double speed_probe_s(ModelRunner& runner, const RunnerConfig& config) {
  constexpr int64_t kProbeTokens = 64;  // decode keys and prefill chunk: small shapes of a grid (quick)
  constexpr int64_t kProbeDecodeBatch = 4;
  constexpr int kProbeRepeats = 7;  // the median of 7: a burst of load moves a few repeats, not it
  const int64_t tokens = std::min<int64_t>(kProbeTokens, config.total_pages * config.page_tokens);
  const int64_t pages_each = (tokens + config.page_tokens - 1) / config.page_tokens;
  const int64_t batch = std::clamp<int64_t>(config.total_pages / pages_each, 1, kProbeDecodeBatch);
  const GridPoint points[] = {{true, false, batch, tokens}, {false, false, 1, tokens}};
  for (const GridPoint& p : points) run_once(runner, config, p);  // warm-up
  std::vector<double> repeats;
  for (int r = 0; r < kProbeRepeats; ++r) {
    double s = 0;
    for (const GridPoint& p : points) s += run_once(runner, config, p).step_s;
    repeats.push_back(s);
  }
  return median(repeats);
}

namespace {

constexpr int32_t kRateGemmDim = 256;  // 256^3: large enough to reach the GEMM's rate, ~10 ms on one core
constexpr int64_t kRateCopyBytes = 64 << 20;     // 64 MiB: far beyond the caches
constexpr int64_t kRateMessageFloats = 1 << 18;  // 1 MiB all-reduce
constexpr int kRateRepeats = 5;

// Seconds of the fastest of kRateRepeats calls of fn (the least disturbed by other processes).
template <class Fn>
double fastest_s(const KernelSet& k, Fn fn) {
  SteadyClock clock;
  double best = 1e30;
  for (int r = 0; r < kRateRepeats; ++r) {
    k.synchronize();
    const double t0 = clock.now_s();
    fn();
    k.synchronize();
    best = std::min(best, clock.now_s() - t0);
  }
  return std::max(best, 1e-9);
}

// One all-reduce of `floats` floats on a two-rank in-process group, fastest of kRateRepeats.
double all_reduce_s(int64_t floats) {
  cpu::LocalGroup group(2);
  std::vector<float> a(static_cast<size_t>(floats), 1.0f), b(a);
  SteadyClock clock;
  double best = 1e30;
  for (int r = 0; r < kRateRepeats; ++r) {
    const double t0 = clock.now_s();
    std::thread peer([&] { group.rank(1).all_reduce_sum(b.data(), floats); });
    group.rank(0).all_reduce_sum(a.data(), floats);
    peer.join();
    best = std::min(best, clock.now_s() - t0);
  }
  return std::max(best, 1e-9);
}

}  // namespace

OwnHardware measure_machine(const KernelSet* kernels) {
  const KernelSet& k = kernels != nullptr ? *kernels : cpu_kernel_set();
  OwnHardware hw;
  const int64_t dim = kRateGemmDim;
  DeviceBuffer<float> x(k, std::vector<float>(static_cast<size_t>(dim * dim), 0.5f));
  DeviceBuffer<float> w(k, std::vector<float>(static_cast<size_t>(dim * dim), 0.25f));
  DeviceBuffer<float> y(k);
  y.resize(dim * dim);
  const double gemm_s = fastest_s(k, [&] {
    k.gemm({y.data(), x.data(), w.data(), nullptr, DType::kF32, kRateGemmDim, kRateGemmDim, kRateGemmDim,
            false});
  });
  hw.gemm_flops = 2.0 * double(dim * dim * dim) / gemm_s;
  DeviceBuffer<uint8_t> src(k), dst(k);
  src.resize(kRateCopyBytes);
  dst.resize(kRateCopyBytes);
  const double copy_s = fastest_s(k, [&] { k.copy(dst.data(), src.data(), kRateCopyBytes); });
  hw.memory_bw = 2.0 * double(kRateCopyBytes) / copy_s;  // read + write
  hw.memory_bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  hw.collective_latency_s = all_reduce_s(1);
  hw.collective_bw = double(kRateMessageFloats) * sizeof(float) / all_reduce_s(kRateMessageFloats);
  return hw;
}

}  // namespace tokenline
