#include "engine/core/context_hold.h"

#include <algorithm>
#include <cassert>

namespace tokenline {

namespace {

// py_executor.py _balance_adp_requests: every rank sees the same all-gathered counts, so every rank takes
// the same decision.
ContextHoldDecision balance(const ContextHoldConfig& c, std::span<const RankSchedule> ranks,
                            const ContextHoldState& state) {
  const bool free_slots = std::all_of(ranks.begin(), ranks.end(), [&](const RankSchedule& r) {
    return r.generation_requests < c.max_batch_size;
  });
  const bool all_context =
      std::all_of(ranks.begin(), ranks.end(), [](const RankSchedule& r) { return r.context_requests > 0; });
  const bool all_generation = std::all_of(ranks.begin(), ranks.end(),
                                          [](const RankSchedule& r) { return r.generation_requests > 0; });
  ContextHoldDecision d{.hold = false, .next = state};
  if (free_slots && all_context) {
    d.next.adp_waiting_iters = 0;
    if (all_generation) {
      if (state.adp_batching_iters < c.adp_batching_wait_iters) {
        ++d.next.adp_batching_iters;
        d.hold = true;
      } else {
        d.next.adp_batching_iters = 0;
      }
    }
    return d;
  }
  // Some rank has no context request (or no free slot): wait for it, up to the timeout, unless some rank
  // has nothing to generate (then waiting would idle it).
  d.next.adp_waiting_iters = state.adp_waiting_iters + 1;
  d.hold = true;
  if (d.next.adp_waiting_iters >= c.adp_timeout_iters || !all_generation) {
    d.next.adp_waiting_iters = 0;
    d.hold = false;
  }
  return d;
}

// py_executor.py _waiting_requests, called only when the step has context and generation requests ("if no
// generation requests, no need to wait, to avoid dead waiting").
ContextHoldDecision batch_wait(const ContextHoldConfig& c, const RankSchedule& rank,
                               const ContextHoldState& state) {
  ContextHoldDecision d{.hold = false, .next = state};
  if (rank.context_requests == 0 || rank.generation_requests == 0) return d;
  const bool stop = state.batch_wait_iters >= c.batch_wait_timeout_iters ||
                    double(rank.scheduled_tokens) >= c.batch_wait_max_tokens_ratio * double(c.max_num_tokens);
  if (stop) {
    d.next.batch_wait_iters = 0;
  } else {
    d.next.batch_wait_iters = state.batch_wait_iters + 1;
    d.hold = true;
  }
  return d;
}

}  // namespace

ContextHoldDecision decide_context_hold(const ContextHoldConfig& config, std::span<const RankSchedule> ranks,
                                        const ContextHoldState& state) {
  assert(!ranks.empty() && "an instance has at least one attention rank");
  if (ranks.size() > 1) {
    if (config.adp_balance) return balance(config, ranks, state);
    return ContextHoldDecision{.hold = false, .next = state};
  }
  if (config.batch_waiting()) return batch_wait(config, ranks.front(), state);
  return ContextHoldDecision{.hold = false, .next = state};
}

}  // namespace tokenline
