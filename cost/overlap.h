// Overlap: the seed's three levels of MoE communication / computation overlap (its sixth part), each
// including the ones before; used by the simgrid backend, which runs compute and comm streams per rank.
#pragma once

#include <string>
#include <string_view>

namespace tokenline {

enum class Overlap {
  kNone,      // the ledger's serial sum (what the analytic backend computes)
  kCombine,   // combine runs in the expert GEMM's shadow
  kTwoBatch,  // + two-batch overlap: one sub-batch's dispatch under the other's attention block
  kDpGather,  // + DP all-gather / reduce-scatter beside the neighbouring MoE layer (router, experts)
};

// "none", "combine", "tbo", "dp-gather"; parse throws InputError naming `where`.
std::string_view to_string(Overlap overlap);
Overlap parse_overlap(const std::string& value, const std::string& where);

}  // namespace tokenline
