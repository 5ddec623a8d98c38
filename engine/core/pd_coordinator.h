// PdCoordinator: the request bookkeeping of prefill/decode disaggregation, shared by the simulation's PD
// driver and usable by a real PD engine: what is known of each request between its prefill and decode
// instances (PdLive), the decode-side reservation (PdHandoff: FIFO, back-pressure), the rejection of a
// request that can never fit a decode rank, and the merge of the two sides' records into the request's
// one final record. It moves no bytes and reads no clock: the driver reports what happened and when
// (times are data), and does the transport (a sender actor, a network flow, an RDMA write) itself.
// Never throws; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/core/pd_handoff.h"
#include "engine/core/request.h"

namespace tokenline {

// What is kept of a request between its prefill and decode instances (lookups only).
struct PdLive {
  double arrival_s = 0;
  int32_t prefill_instance = 0;
  int32_t prefill_rank = 0;
  int64_t cached_tokens = 0;
  int32_t preemptions = 0;
  double first_chunk_start_s = -1;
  PdGrant grant;
  double transfer_bytes = 0;
  double transfer_s = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  // A layer-streamed hand-off: queued when its last chunk's step started (stream_start_s), whose layers
  // each take stream_layer_s; handoff_s once that step ended (handed_off).
  bool streamed = false;
  double stream_start_s = 0;
  double stream_layer_s = 0;
  bool handed_off = false;
  double handoff_s = 0;
};

class PdCoordinator {
 public:
  explicit PdCoordinator(const PdPoolShape& shape) : handoff_(shape) {}

  // A request routed to prefill_instance at now_s. When it fits the prefill side (prefill_fits) but can
  // never fit a decode rank, returns its rejection record (kNeverFitsDecodeKv) and does not track it;
  // otherwise starts tracking it and returns nothing (the prefill instance rejects what it cannot hold).
  std::optional<RequestRecord> arrive(const RequestSpec& spec, int32_t prefill_instance, bool prefill_fits,
                                      double now_s);
  // REQUIRES: the request is tracked (arrived, not yet forgotten).
  PdLive& live(RequestId id) { return live_.at(id); }
  // The prefill instance's record of a request it handed off: its rank, cached tokens and preemptions.
  PdLive& handed_off(const RequestRecord& prefill_record);
  // Queues the request for a decode reservation; preferred_decode: the router's pick (-1: none).
  void enqueue(RequestId id, int32_t preferred_decode);
  // Reserves decode pages for the queue's head while they fit; appends the grants to out. Each granted
  // request is in transfer until delivered().
  void grant(std::vector<PdGrant>& out);
  // The request's KV has arrived at its decode rank after transfer_s.
  void delivered(RequestId id, double transfer_s);
  // The decode instance's final record merged with the prefill side's (arrival, cached tokens,
  // preemptions of both); releases the decode reservation. REQUIRES: the request was delivered.
  RequestRecord merge_decode_record(const RequestRecord& decode_record);
  // Stops tracking the request (it left the system); nothing when it is not tracked.
  void forget(RequestId id) { live_.erase(id); }

  // Back-pressure: prefill_instance's waiting hand-offs fill its KV pool.
  bool prefill_blocked(int32_t prefill_instance) const { return handoff_.prefill_blocked(prefill_instance); }
  int64_t waiting() const { return handoff_.waiting(); }
  int64_t in_transfer() const { return in_transfer_; }  // granted, not yet delivered
  // An autoscaled decode pool: whether decode_instance may get grants (PdHandoff::set_open).
  void set_decode_open(int32_t decode_instance, bool open) { handoff_.set_open(decode_instance, open); }
  const PdHandoff& handoff() const { return handoff_; }

 private:
  PdHandoff handoff_;
  std::unordered_map<RequestId, PdLive> live_;  // lookups only: never iterated into outputs
  int64_t in_transfer_ = 0;
};

}  // namespace tokenline
