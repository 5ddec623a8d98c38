// Batch: what one attention rank computes in one forward step. Produced by Scheduler::plan(), read by
// executors (cost models in sim, kernels in real), never mutated after planning.
#pragma once

#include <cstdint>
#include <vector>

namespace tokenline {

using RequestId = int64_t;

enum class Phase { kPrefill, kDecode };

struct BatchEntry {
  RequestId id = 0;
  Phase phase = Phase::kDecode;
  int64_t new_tokens = 0;        // tokens computed this step: a prefill chunk, or 1 (+ MTP drafts) in decode
  int64_t context_tokens = 0;    // tokens already in KV before this step (cached prefix + earlier chunks)
  int32_t draft_tokens = 0;      // MTP drafts verified this step (decode only)
  bool last_chunk = false;       // prefill: this chunk completes the prompt and samples the first token
  int64_t host_load_tokens = 0;  // of context_tokens, those loaded back from the host tier before this step
};

// The page table of a batch's entries as CSR, the arrays of kernels/paged_kv.h's PagedKvTable: entry i's
// pages (token order, covering its context + new tokens) are indices[indptr[i] .. indptr[i + 1]).
struct BatchPages {
  std::vector<int32_t> indptr;   // [entries + 1]
  std::vector<int32_t> indices;  // [indptr.back()]: page ids in the rank's pool
  // With a window pool (window_kv.h), entry i's window pages, token order, in the same CSR form, and the
  // page index (in pages of its tokens) of its first window page; empty without one.
  std::vector<int32_t> window_indptr;
  std::vector<int32_t> window_indices;
  std::vector<int32_t> window_first;
  // With a state pool (state_pool.h), entry i's recurrent-state slot; empty without one.
  std::vector<int32_t> state_slots;
};

struct Batch {
  int32_t rank = 0;  // attention-DP rank inside the instance (0 when there is no DP attention)
  std::vector<BatchEntry> entries;
  // Host-tier traffic of this rank that the step waits for (KvManager's host tier; 0 without one): bytes
  // loaded back for its admissions, and bytes written back (write_back) by the last step's evictions.
  int64_t host_load_bytes = 0;
  int64_t host_store_bytes = 0;
  // Write-through copies (HBM -> host) of the pages inserted since the last step: asynchronous, the step
  // does not wait for them, but in the simgrid backend they share the GPU's link from this step's start.
  int64_t host_async_store_bytes = 0;

  bool empty() const { return entries.empty(); }
  int64_t prefill_tokens() const {
    int64_t n = 0;
    for (const auto& e : entries) n += e.phase == Phase::kPrefill ? e.new_tokens : 0;
    return n;
  }
  int64_t decode_requests() const {
    int64_t n = 0;
    for (const auto& e : entries) n += e.phase == Phase::kDecode ? 1 : 0;
    return n;
  }
  int64_t total_tokens() const {
    int64_t n = 0;
    for (const auto& e : entries) n += e.new_tokens;
    return n;
  }
};

}  // namespace tokenline
