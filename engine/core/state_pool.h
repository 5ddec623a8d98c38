// StatePool: one attention rank's recurrent-state slots for a model with linear-attention layers (Gated
// DeltaNet, Mamba-2; engine/model/linear_state.h). A slot holds one request's conv window and SSM / delta
// state of every linear layer, fixed in size whatever its context: taken when the request is admitted,
// returned when it leaves the running set (finish, abort, preemption, retraction). Full-attention layers
// keep paged KV in the KvManager beside it. Sized as the engines size it (cost/memory.h
// linear_state_capacity): SGLang's MambaPool of max_mamba_cache_size slots, whose count also bounds the
// running requests (HybridReqToTokenPool). No slots: the model has no linear layers and the pool is off.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tokenline {

using StateHolder = int32_t;  // a request's slot in its scheduler (KvManager's HolderId)

class StatePool {
 public:
  explicit StatePool(int64_t slots = 0);

  bool enabled() const { return total_slots() > 0; }
  int64_t total_slots() const { return static_cast<int64_t>(owner_.size()); }
  int64_t free_slots() const { return static_cast<int64_t>(free_.size()); }
  int64_t used_slots() const { return total_slots() - free_slots(); }
  int64_t peak_used_slots() const { return peak_used_; }
  bool holds(StateHolder holder) const { return slot_of(holder) >= 0; }
  // The slot holder holds, -1 for none.
  int32_t slot_of(StateHolder holder) const {
    return holder >= 0 && static_cast<size_t>(holder) < slot_by_holder_.size()
               ? slot_by_holder_[static_cast<size_t>(holder)]
               : -1;
  }

  // REQUIRES: enabled(), free_slots() > 0, !holds(holder). The lowest free slot first from a fresh pool,
  // then the last returned (LIFO, as PagePool): deterministic either way.
  int32_t take(StateHolder holder);
  // Returns holder's slot; nothing when it holds none (a request admitted before the pool was full).
  void give(StateHolder holder);

  // Every slot free or held by exactly one holder, and the two maps agree.
  bool check(std::string* why) const;

 private:
  std::vector<int32_t> free_;            // stack of free slots
  std::vector<StateHolder> owner_;       // by slot: its holder, -1 when free
  std::vector<int32_t> slot_by_holder_;  // by holder: its slot, -1 for none
  int64_t peak_used_ = 0;
};

}  // namespace tokenline
