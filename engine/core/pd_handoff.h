// PdHandoff: the decisions of prefill/decode disaggregation between a prefill pool and a decode pool.
// A request that left a prefill instance (kHandedOff) waits here, first in first out, until some decode
// rank can promise the pages it will hold (prompt + output - 1 tokens) and one of its request slots; both
// are reserved before its KV transfer starts and released when it leaves the decode instance, so a
// transfer never lands on a full rank, a delivered request joins the decode batch at once (its first
// token reaches the client then, as SGLang streams it from the decode side's first batch) and no request
// is lost. The slots are the rank's max running requests: SGLang's decode pre-allocation stops when its
// request pool (max_running_requests slots) is taken, and the request waits before it is sent. A prefill
// instance whose waiting hand-offs would fill its own KV pool (their KV stays there until sent) is
// back-pressured: it pauses until they start. No clock: the driver passes requests in and asks what starts.
// Never throws; not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "engine/core/request.h"

namespace tokenline {

struct PdPoolShape {
  int32_t prefill_instances = 1;
  int64_t prefill_pages_per_instance = 0;  // all ranks of one prefill instance
  int32_t decode_instances = 1;
  int32_t decode_ranks = 1;  // attention-DP ranks per decode instance
  int64_t decode_pages_per_rank = 0;
  int32_t decode_requests_per_rank = 0;  // request slots (max running requests) per rank; 0: no limit
  int64_t page_tokens = 64;
};

struct PdWaiting {
  RequestId id = 0;
  int32_t prefill_instance = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int32_t preferred_decode = -1;  // the router's pick; -1: none
};

struct PdGrant {
  RequestId id = 0;
  int32_t prefill_instance = 0;
  int32_t decode_instance = 0;
  int32_t decode_rank = 0;
  int64_t pages = 0;  // reserved on that rank until release()
};

class PdHandoff {
 public:
  explicit PdHandoff(const PdPoolShape& shape);

  // Pages a request holds on a decode rank, and the pages its prompt KV holds on the prefill side.
  int64_t decode_pages(int64_t prompt_tokens, int64_t output_tokens) const;
  int64_t prompt_pages(int64_t prompt_tokens) const;
  // kNeverFitsDecodeKv when even an empty decode rank cannot hold the request; kNone otherwise.
  RejectReason validate(int64_t prompt_tokens, int64_t output_tokens) const;
  // REQUIRES: validate(...) == kNone.
  void enqueue(const PdWaiting& w);
  // Grants reservations to the queue's head while they fit (strict FIFO: a big request is never
  // overtaken forever): on the preferred decode instance's emptiest rank if it fits, else on the
  // emptiest rank anywhere (ties to the lowest instance, then rank). Appends grants to out.
  void grant(std::vector<PdGrant>& out);
  // The request left the decode rank: its pages are free to promise again.
  void release(const PdGrant& grant);
  // Back-pressure: prompt pages of prefill_instance's waiting hand-offs fill its pool.
  bool prefill_blocked(int32_t prefill_instance) const;
  // An autoscaled decode pool: a closed decode instance (starting, draining or off) gets no new grant, even
  // as the preferred one; its reservations are released as before. Every instance is open at first.
  void set_open(int32_t decode_instance, bool open) { open_[static_cast<size_t>(decode_instance)] = open; }

  int64_t waiting() const { return static_cast<int64_t>(queue_.size()); }
  int64_t reserved_pages(int32_t decode_instance, int32_t rank) const;
  int32_t reserved_requests(int32_t decode_instance, int32_t rank) const;
  // Reservations never exceed any rank's pool or slots; waiting prompt pages agree with the queue.
  bool check() const;

 private:
  size_t slot(int32_t instance, int32_t rank) const;
  bool has_request_slot(int32_t instance, int32_t rank) const;
  bool place(const PdWaiting& w, int64_t pages, PdGrant& out) const;

  PdPoolShape shape_;
  std::deque<PdWaiting> queue_;
  std::vector<int64_t> reserved_;       // pages, [instance * ranks + rank]
  std::vector<int32_t> requests_;       // requests holding a reservation, [instance * ranks + rank]
  std::vector<int64_t> waiting_pages_;  // per prefill instance: prompt pages of its queued hand-offs
  std::vector<char> open_;              // per decode instance: may get grants (set_open)
};

}  // namespace tokenline
