// Input limits: the explicit bounds on what tokenline accepts from files and the command line. Input
// beyond one of them is refused with one InputError (exit 2) before work starts, instead of exhausting
// memory, overflowing int64 nanosecond time or the stack. docs/input-limits.md lists them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tokenline::limits {

// JSON nesting: the deepest real input (a cluster JSON) nests 4 levels; 64 leaves room while keeping the
// recursive walks of a parsed document (dump, copy) far from a stack's end, also a SimGrid actor's.
inline constexpr int kMaxJsonDepth = 64;
// One workload line: a Mooncake line of a 1M-token prompt is ~25 KB (2,048 hash ids); a tokenline line
// of kMaxRequestTokens in 512-token blocks is ~5 MB (262,144 ids of <= 20 digits); 64 MiB holds either.
inline constexpr int64_t kMaxLineBytes = int64_t{64} << 20;
// Prompt or output tokens of one request: 128x the longest model context (1M tokens).
inline constexpr int64_t kMaxRequestTokens = int64_t{1} << 27;
// Arrival times (after --time-scale): virtual time is int64 nanoseconds, which ends at 9.2e9 s (292
// years); arrivals end by 1e9 s (31.7 years) so a run's later events stay in range.
inline constexpr double kMaxArrivalS = 1e9;
// Instances of one simulation: each holds its own KV pool and actor; 1,024 instances of 8 GPUs is a
// 8,192-GPU deployment, beyond any published serving cluster.
inline constexpr int64_t kMaxInstances = 1024;
// KV pages of one run, all ranks of all instances together (--kv-pages, or sized from HBM and
// --page-size): the core keeps ~9 bytes per page up front (free stack 4, free flag 1, radix node index 4),
// 2.4 GB at the limit; 2^28 pages of 64 tokens are 17G tokens, ~8,000x an 8xH200 dp8-ep8 instance's KV.
inline constexpr int64_t kMaxKvPages = int64_t{1} << 28;
// Turns of one synthetic session: each turn's prompt carries the whole conversation so far, so a session
// of T turns costs O(T^2) tokens; 1,000 turns of 1K tokens already reach 1M-token prompts (the longest
// context), and chat traces (ShareGPT, Mooncake's conversations) stay below a few hundred turns.
inline constexpr int64_t kMaxTurns = 1'000;
// Requests one synthetic spec generates (n, or sessions x turns): a day at 1,000 requests/s is 86.4M.
inline constexpr int64_t kMaxSyntheticRequests = 100'000'000;
// A non-regular workload file (FIFO, pipe, /dev/stdin) is read once into memory: 1 GiB, ~10x the
// largest published Mooncake trace.
inline constexpr int64_t kMaxStreamedWorkloadBytes = int64_t{1} << 30;
// One file of an op profile (profile.json, a CSV table) or a small side input (--expert-skew histogram:):
// the largest published table (topologies/profiles/h200-sglang) is under 1 MB; 64 MiB is ~100x it.
inline constexpr int64_t kMaxProfileFileBytes = int64_t{64} << 20;
// The simulated horizon: no virtual clock passes 2e9 s (63 years). Arrivals end by kMaxArrivalS (1e9 s),
// which leaves a run another 1e9 s to finish its work, and outputs that write times as int64 nanoseconds
// (which end at 9.2e9 s) stay 4.6x inside their range. A run whose clock would pass it stops with a message.
inline constexpr double kMaxSimulatedS = 2e9;

}  // namespace tokenline::limits

namespace tokenline {

// The one rule for reading a whole input file: bounded before it is read. A regular file longer than
// `max_bytes` is refused from its size without reading it; any other file (a FIFO, a pipe, /dev/zero) is
// read until it ends or passes `max_bytes`, then refused. A directory is refused. nullopt when the file
// cannot be opened (the caller words "no such file" for its input); InputError naming `where` otherwise.
std::optional<std::string> read_bounded_file(const std::string& path, int64_t max_bytes,
                                             const std::string& where);

}  // namespace tokenline
