// Term and StepCost: one op's or collective's share of a step and the whole step's breakdown (Vidur's
// ExecutionTime: a term per op, so calibration and sim-vs-real comparison happen term by term).
#pragma once

#include <array>
#include <cstdint>

#include "engine/model/ledger.h"

namespace tokenline {

// What priced a term's time: the roofline (rates x work), a measured op profile (op_profile.h), or the
// roofline x the efficiency another GPU's profile measured on the same shapes (time_source_transfer.h).
enum class TermSource : uint8_t { kRoofline, kProfile, kTransferred };
std::string_view time_source_name(TermSource source);  // "roofline" | "profile" | "transferred"
// A term whose time_s is its time as priced (a profile's or a transferred one), not max(compute, memory).
inline bool priced(TermSource source) {
  return source != TermSource::kRoofline;
}

// One op's or collective's share of a step: instance-wide totals, and the busiest attention rank's share
// (one rank = its tp GPUs together; one GPU under dp8, the whole instance under tp8).
struct Term {
  int layers = 0;             // layers it runs on (1 for per-step ops)
  int64_t count = 0;          // kernel launches or collective calls on one GPU
  double flops = 0;           // instance-wide
  double hbm_bytes = 0;       // instance-wide
  double rank_flops = 0;      // busiest rank
  double rank_hbm_bytes = 0;  // busiest rank = weight + kv + indexer + activation bytes below
  double weight_bytes = 0;    // busiest rank
  double kv_bytes = 0;        // busiest rank: main KV read + written
  double indexer_bytes = 0;   // busiest rank: indexer cache read + written
  double bytes_each = 0;      // collectives: one message of one rank (the seed's formula)
  double bytes_total = 0;     // collectives: count x bytes_each
  double compute_s = 0;       // one GPU: rank_flops / tp / FLOP rate
  double memory_s = 0;        // one GPU: rank_hbm_bytes / tp / HBM bandwidth (collectives: transfer)
  double launch_s = 0;        // kernel or collective launches
  double time_s = 0;          // roofline: max(compute_s, memory_s) + launch_s; profile: the measured time
  TermSource source = TermSource::kRoofline;
  // Of a priced term's time_s, the part the roofline priced on top of its rows (the padding rows of a
  // contiguous-layout grouped GEMM, TimingParam::kMoeContiguousAlign): counted as activation time, not
  // measured time, in StepCost.
  double roofline_s = 0;
  // A collective priced from the rows of a smaller group than its own (a lower bound: op_profile_resolve.cpp
  // comm_curve): priced, though the profile did not measure this group (a profile does not cover it).
  bool smaller_group = false;
};

// Bytes moved by the busiest attention rank in one step, by class.
struct RankBytes {
  double weight_read = 0;
  double kv_read = 0;
  double kv_write = 0;
  double indexer_read = 0;
  double indexer_write = 0;
};

struct StepCost {
  std::array<Term, kOpCount> terms{};
  RankBytes bytes;       // busiest rank
  double total_s = 0;    // busiest GPU: compute ops + collectives + launches
  double compute_s = 0;  // ops whose roofline is compute-bound
  double weights_s = 0;  // memory-bound time, split by byte class
  double kv_s = 0;
  double indexer_s = 0;
  double activations_s = 0;
  double comm_s = 0;       // collectives' transfer time
  double launch_s = 0;     // collective launches + kernel launches
  double profile_s = 0;    // terms priced from the profile or transferred (not split into the classes above)
  double derived_s = 0;    // of profile_s: terms from rows of another weight format, scaled by the rule
                           // (op_profile_pricing.h FormatRows)
  double bounded_s = 0;    // of profile_s: collectives priced at a smaller group's rows, a lower bound on a
                           // group the profile did not measure (Term::smaller_group)
  double gpu_floor_s = 0;  // profile timing: the GPU part lasts at least this (per layer run x layers run;
                           // a context step of an MLA model: the host's launches of its layers)
  double floor_s = 0;      // what lifts a short step to gpu_floor_s
  double overhead_s = 0;   // profile timing: per-step CPU time not hidden behind the GPU
  int busiest_rank = 0;
  int64_t tokens = 0;  // new tokens over all ranks
  const Term& operator[](Op op) const { return terms[static_cast<size_t>(op)]; }
  Term& operator[](Op op) { return terms[static_cast<size_t>(op)]; }
  double collective_bytes() const;  // sum of bytes_total over collectives
  int64_t collective_count() const;
  double flops() const;                                                      // instance-wide
  double coverage() const { return total_s > 0 ? profile_s / total_s : 0; }  // share of time from profiles
};

}  // namespace tokenline
