// Request: what a driver submits (RequestSpec), what the core keeps per request while it lives (Request),
// and what it hands back when the request leaves (RequestRecord). Times are data passed in by the driver;
// the core never reads a clock.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/core/batch.h"

namespace tokenline {

// Why a request was refused at add time. Closed set; counted per reason, never dropped silently.
enum class RejectReason {
  kNone,
  kNonPositivePrompt,  // prompt_tokens <= 0
  kNonPositiveOutput,  // output_tokens <= 0
  kExceedsContext,     // prompt_tokens + output_tokens > the model's max context
  kNeverFitsKv,        // even alone, the request's KV exceeds the rank's whole page pool
  kWrongRole,          // a fresh request sent to a decode-only instance, or a KV-ready one to prefill-only
  kNeverFitsDecodeKv,  // PD: fits the prefill side, but even an empty decode rank cannot hold its KV
};
inline constexpr int kRejectReasonCount = 7;
std::string_view to_string(RejectReason reason);

enum class RequestStatus {
  kWaiting,    // queued (new, or preempted and requeued)
  kRunning,    // admitted: prefilling chunks or decoding
  kFinished,   // produced output_tokens tokens
  kHandedOff,  // prefill-only role: left after its last chunk with its first token (PD hook)
  kRejected,   // refused at add time, see RejectReason
  kCancelled,  // aborted while waiting or running (a client went away): its pages were released
};
std::string_view to_string(RequestStatus status);

// What the driver submits. Lengths are in tokens. Optional prefix identity, in order of preference:
// token_ids (page keys hashed from the ids), block_hashes (e.g. Mooncake hash_ids of block_tokens-token
// blocks), or neither (keys unique to the request: it can hit only its own pages after a preemption).
struct RequestSpec {
  RequestId id = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int32_t priority = 0;            // larger = more urgent (kPriority policy), as in every workload format
  std::vector<int32_t> token_ids;  // optional, size == prompt_tokens when given
  std::vector<uint64_t>
      block_hashes;            // optional, block i covers prompt tokens [i*block_tokens, (i+1)*block_tokens)
  int64_t block_tokens = 512;  // Mooncake traces hash 512-token blocks
};

// Page keys of a prompt's full pages (the cache's unit). Page p's key with block hashes is
// mix(block_hashes[b], p) where b is the block holding the page's last token: a Mooncake hash id already
// names the whole prefix up to its block, so this names the prefix up to the page (8 keys per 512-token
// block with 64-token pages). With token ids, keys chain: key_p = mix(key_{p-1}, hash(tokens of page p)).
// Only pages fully covered by the given ids/hashes get keys.
std::vector<uint64_t> derive_page_keys(const RequestSpec& spec, int64_t page_tokens);

// Handed out by drain: what the core knows of a request that left it (run/recorder.cpp turns it into a
// RequestRow, one row of requests.csv). token_times_s holds one time per output token (MTP
// tokens accepted in one step share the step's end time), so TTFT/TPOT/ITL/E2E need nothing else.
struct RequestRecord {
  RequestId id = 0;
  RequestStatus status = RequestStatus::kWaiting;
  RejectReason reject_reason = RejectReason::kNone;
  int32_t rank = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;     // requested (as RequestSpec::output_tokens and the workloads')
  int64_t generated_tokens = 0;  // produced
  int64_t cached_tokens = 0;     // prefix-cache hit at the first admission
  int32_t preemptions = 0;       // requeued for recompute, retractions included
  int32_t retractions = 0;  // of the preemptions, SGLang-style retractions (ReservationPolicy::kEstimate)
  double arrival_s = 0;
  double first_token_s = -1;  // -1 until the first token
  double finish_s = -1;       // -1 until finished / handed off; arrival_s for a rejection
  std::vector<double> token_times_s;
};

// Internal per-request state, kept in a scheduler's contiguous slot storage (stable slot ids).
struct Request {
  RequestRecord record;
  std::vector<uint64_t> page_keys;
  int64_t prefill_target_tokens =
      0;                        // tokens to have in KV before decoding (prompt, or more after recompute)
  int64_t computed_tokens = 0;  // tokens whose KV is written
  int64_t arrival_seq = 0;      // tie-break order (FCFS)
  int32_t priority = 0;
  bool kv_ready = false;  // PD decode side: arrives with its prompt KV (after transfer)
  // PD decode side: the prefill instance's token, generated but not yet streamed to the client (it goes
  // out with the request's first decode step; Scheduler::add).
  bool first_token_held = false;
  bool live = false;  // the slot holds a request that has not been drained

  bool prefilling() const { return computed_tokens < prefill_target_tokens; }
  // KV tokens the request can ever hold: the last sampled token is never fed back.
  int64_t max_kv_tokens() const { return record.prompt_tokens + record.output_tokens - 1; }
  int64_t remaining_output() const { return record.output_tokens - record.generated_tokens; }
};

}  // namespace tokenline
