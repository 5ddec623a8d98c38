// The monotone rule for measured tables: a kernel does not take longer for less work. Applied to every table
// as a profile loads (op_profile.cpp), so no profile file changes; rule and evidence in
// topologies/profiles/README.md ("Monotone in work").
#pragma once

#include <cstdint>
#include <vector>

#include "cost/op_profile.h"

namespace tokenline {

// The numeric columns (indices among a table's numeric columns, latency_ms excluded) along which more of the
// value is more work with the op's shape unchanged: the sizes a profile interpolates along (gemm m; moe,
// mla_bmm tokens; comm bytes; the attention, DSA and own-profile tables batch and tokens). The others (n, k,
// heads, hidden, experts, TP, EP, GPUs) pick a shape. Empty for kCount.
std::vector<int> envelope_work_columns(ProfileTableKind kind);

struct EnvelopeChange {
  int64_t rows = 0;      // rows lowered
  double max_ratio = 1;  // the largest measured latency over its envelope value
};

// Replaces each row's latency by the lowest latency measured at no less work: the minimum over the rows of
// the same shape (every text column and every non-work column equal) whose work columns are each >= this
// row's (the row itself included). The result never decreases as any work column grows at a fixed shape, and
// equals the measurement wherever the measurements already did not. Deterministic: depends only on the rows.
EnvelopeChange apply_lower_envelope(ProfileTable& table, ProfileTableKind kind);

}  // namespace tokenline
