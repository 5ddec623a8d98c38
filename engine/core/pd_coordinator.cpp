#include "engine/core/pd_coordinator.h"

namespace tokenline {

std::optional<RequestRecord> PdCoordinator::arrive(const RequestSpec& spec, int32_t prefill_instance,
                                                   bool prefill_fits, double now_s) {
  const RejectReason decode_fit = handoff_.validate(spec.prompt_tokens, spec.output_tokens);
  if (prefill_fits && decode_fit != RejectReason::kNone) {
    RequestRecord r;
    r.id = spec.id;
    r.status = RequestStatus::kRejected;
    r.reject_reason = decode_fit;
    r.prompt_tokens = spec.prompt_tokens;
    r.output_tokens = spec.output_tokens;
    r.arrival_s = now_s;
    r.finish_s = now_s;
    return r;
  }
  PdLive& l = live_[spec.id];
  l.arrival_s = now_s;
  l.prefill_instance = prefill_instance;
  l.prompt_tokens = spec.prompt_tokens;
  l.output_tokens = spec.output_tokens;
  return std::nullopt;
}

PdLive& PdCoordinator::handed_off(const RequestRecord& prefill_record) {
  PdLive& l = live_.at(prefill_record.id);
  l.prefill_rank = prefill_record.rank;
  l.cached_tokens = prefill_record.cached_tokens;
  l.preemptions = prefill_record.preemptions;
  return l;
}

void PdCoordinator::enqueue(RequestId id, int32_t preferred_decode) {
  const PdLive& l = live_.at(id);
  handoff_.enqueue(PdWaiting{.id = id,
                             .prefill_instance = l.prefill_instance,
                             .prompt_tokens = l.prompt_tokens,
                             .output_tokens = l.output_tokens,
                             .preferred_decode = preferred_decode});
}

void PdCoordinator::grant(std::vector<PdGrant>& out) {
  const size_t first = out.size();
  handoff_.grant(out);
  for (size_t i = first; i < out.size(); ++i) {
    live_.at(out[i].id).grant = out[i];
    ++in_transfer_;
  }
}

void PdCoordinator::delivered(RequestId id, double transfer_s) {
  live_.at(id).transfer_s = transfer_s;
  --in_transfer_;
}

RequestRecord PdCoordinator::merge_decode_record(const RequestRecord& decode_record) {
  const PdLive& l = live_.at(decode_record.id);
  handoff_.release(l.grant);
  RequestRecord merged = decode_record;
  merged.arrival_s = l.arrival_s;
  merged.cached_tokens = l.cached_tokens;
  merged.preemptions += l.preemptions;
  return merged;
}

}  // namespace tokenline
